// What the keeper last said of each bucket, to decide the requests whose call is late
// (docs/reliability.md §Redis). A keeper that answers late is busy, not gone: deciding its
// requests on this process's own bucket would let each process pass a whole burst, so they are
// decided on the level the keeper last reported instead, refilled since at the bucket's rate and
// spent by the requests decided here meanwhile. Other processes' requests are unseen, so while calls
// are late at most each process's share of the refill passes beyond the shared limit.
import { decide, type RateDecision } from './bucket.ts';

interface Known {
  /** Tokens the bucket held after the last answered call, less what was decided here since. */
  level: number;
  /** The keeper's clock at that answer, and ours when it arrived. */
  keeperNow: number;
  at: number;
}

/** Entries older than this describe a full bucket (a burst is one second's quota): forgotten. */
const FORGET_MS = 1000;

export class LastKnown {
  readonly #clock: () => number;
  readonly #byKey = new Map<string, Known>();
  #notes = 0;

  constructor(clock: () => number) {
    this.#clock = clock;
  }

  /** The keeper answered: the bucket held `level` tokens at its clock `keeperNow`. */
  note(key: string, level: number, keeperNow: number): void {
    if (++this.#notes >= 10_000) this.#sweep();
    this.#byKey.set(key, { level, keeperNow, at: this.#clock() });
  }

  /** A decision from the last known level, or undefined when nothing recent is known. */
  decide(key: string, rate: number): RateDecision | undefined {
    const k = this.#byKey.get(key);
    if (!k) return undefined;
    const now = this.#clock();
    const elapsed = Math.max(0, now - k.at);
    if (elapsed >= FORGET_MS) return undefined;
    k.level = Math.min(rate, k.level + (elapsed * rate) / 1000);
    k.keeperNow += elapsed;
    k.at = now;
    const allowed = k.level >= 1;
    const d = decide(rate, k.level, allowed, k.keeperNow);
    if (allowed) k.level -= 1;
    return d;
  }

  #sweep(): void {
    this.#notes = 0;
    const now = this.#clock();
    for (const [key, k] of this.#byKey) if (now - k.at >= FORGET_MS) this.#byKey.delete(key);
  }
}
