import { BucketStore, bucketKey, type Limits, type RateCategory, type RateDecision, type RateLimiter } from './bucket.ts';

/** In-memory limits for one process. */
export class MemoryRateLimiter implements RateLimiter {
  readonly limits: Limits;
  readonly store = new BucketStore();
  readonly #clock: () => number;

  /** `clock` lets tests move time instead of waiting for it. */
  constructor(limits: Limits, clock: () => number = Date.now) {
    this.limits = limits;
    this.#clock = clock;
  }

  consume(workspaceId: string, category: RateCategory): RateDecision | null {
    const rate = this.limits[category];
    if (!rate) return null;
    return this.store.take(bucketKey(workspaceId, category), rate, this.#clock());
  }

  async close(): Promise<void> {}
}
