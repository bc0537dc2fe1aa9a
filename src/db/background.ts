// Work no request waits for: the background jobs' rounds (src/jobs/poller.ts) run inside
// `inBackground`. On SQLite one connection writes, and a background statement or transaction takes
// it only when no other work waits for it, or once it has waited BACKGROUND_WAIT_MS: requests never
// queue behind the jobs, and the jobs still advance under a load that never pauses
// (docs/performance.md §Background work yields the SQLite writer). On PostgreSQL, where
// transactions have connections of their own, the mark changes nothing.
import { AsyncLocalStorage } from 'node:async_hooks';

const background = new AsyncLocalStorage<boolean>();

/** Runs `fn`, and everything it starts, as background work. */
export function inBackground<T>(fn: () => T): T {
  return background.run(true, fn);
}

/** True inside `inBackground`. */
export function isBackground(): boolean {
  return background.getStore() === true;
}

/** How long background work waits for the SQLite writer at most while other work goes first. */
export const BACKGROUND_WAIT = { ms: 200 };

interface Waiter {
  since: number;
  resolve: () => void;
}

/**
 * The one SQLite writing connection, held by one statement or transaction at a time. Waiters go in
 * order, except that background ones let the others go first until they have waited
 * BACKGROUND_WAIT.ms.
 */
export class WriterTurn {
  #held = false;
  #first: Waiter[] = [];
  #later: Waiter[] = [];

  /** Waiters, background ones included. */
  get waiting(): number {
    return this.#first.length + this.#later.length;
  }

  /** Whether a statement or transaction holds the connection. */
  get held(): boolean {
    return this.#held;
  }

  /** Waits for the connection; `foreground` queues with the requests whatever the caller's context. */
  async enter(foreground = false): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return;
    }
    await new Promise<void>((resolve) => (isBackground() && !foreground ? this.#later : this.#first).push({ since: performance.now(), resolve }));
  }

  /** Hands the connection to the next waiter directly, so that a newcomer cannot overtake it. */
  leave(): void {
    const late = this.#later[0];
    const overdue = late !== undefined && performance.now() - late.since >= BACKGROUND_WAIT.ms;
    const next = overdue || this.#first.length === 0 ? this.#later.shift() : this.#first.shift();
    if (next) next.resolve();
    else this.#held = false;
  }
}
