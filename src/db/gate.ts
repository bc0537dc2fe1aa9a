// How many of one process's transactions, or of its scans, may hold a PostgreSQL connection at once
// (src/db/postgres/connection.ts).
import { DeadlineError } from './postgres/deadline.ts';

/** Lets at most `limit` holders in at a time; the others wait in order. */
export class Gate {
  readonly limit: number;
  #held = 0;
  #waiting: { since: number; resolve: () => void }[] = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  get held(): number {
    return this.#held;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** How long the first in line has waited (0: nobody waits). */
  oldestWaitMs(now = performance.now()): number {
    const first = this.#waiting[0];
    return first === undefined ? 0 : now - first.since;
  }

  /** Waits for a place; with `deadlineMs`, fails with DeadlineError when none came in time. */
  async enter(deadlineMs = 0): Promise<void> {
    if (this.#held < this.limit) {
      this.#held++;
      return;
    }
    // The leaver hands its place over directly, so a newcomer cannot overtake a waiter.
    const waiter = { since: performance.now(), resolve: () => {} };
    const turn = new Promise<void>((resolve) => {
      waiter.resolve = resolve;
      this.#waiting.push(waiter);
    });
    if (!deadlineMs) return turn;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Already handed a place: keeps it (turn settles the race). Still in line: leaves it.
        const at = this.#waiting.indexOf(waiter);
        if (at < 0) return;
        this.#waiting.splice(at, 1);
        reject(new DeadlineError());
      }, deadlineMs);
    });
    try {
      await Promise.race([turn, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  leave(): void {
    const next = this.#waiting.shift();
    if (next) next.resolve();
    else this.#held--;
  }
}
