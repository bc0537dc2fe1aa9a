// What the keeper last said of each bucket, to refuse at once the requests whose call is late and
// which the keeper would refuse too (docs/reliability.md §Redis). Only refusals are decided here:
// other processes take tokens from the bucket unseen, so the level it held at the last answer,
// refilled since at the bucket's rate, is the most it can hold now (but for lease leftovers given
// back, lease.ts), and a request it cannot serve the keeper could not either. A request it could
// serve waits for the keeper's answer: each process allowing on its own view would let every
// process spend that level, a whole burst each for a bucket last seen full.
import { decide, type RateDecision } from './bucket.ts';

interface Known {
  /** Tokens the bucket held after the last answered call. */
  level: number;
  /** The keeper's clock at that answer, and ours when it arrived. */
  keeperNow: number;
  at: number;
}

/** After this long any bucket has refilled by at least one token (a burst is one second's quota): forgotten. */
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

  /** A refusal, when the last known level refilled to now holds no token; else undefined. */
  refusal(key: string, rate: number): RateDecision | undefined {
    const k = this.#byKey.get(key);
    if (!k) return undefined;
    const elapsed = Math.max(0, this.#clock() - k.at);
    if (elapsed >= FORGET_MS) return undefined;
    const level = Math.min(rate, k.level + (elapsed * rate) / 1000);
    return level < 1 ? decide(rate, level, false, k.keeperNow + elapsed) : undefined;
  }

  #sweep(): void {
    this.#notes = 0;
    const now = this.#clock();
    for (const [key, k] of this.#byKey) if (now - k.at >= FORGET_MS) this.#byKey.delete(key);
  }
}
