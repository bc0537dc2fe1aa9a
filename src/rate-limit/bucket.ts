// The token bucket of docs/design.md §Rate limits: per workspace and category, a bucket whose
// capacity (the burst) is one second's quota and which refills continuously at the quota per
// second. The arithmetic lives here once; memory.ts keeps buckets in a process, cluster.ts in the
// cluster primary, redis.ts runs the same steps in one Lua script.
import type { Config } from '../config.ts';

export type RateCategory = 'Read' | 'Write' | 'Search';

export type Limits = Config['rateLimits'];

/** Outcome of one rate-limit check, for the X-RateLimit-* headers. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the bucket is full again. */
  reset: number;
  /** Seconds to wait, when refused. */
  retryAfter: number;
}

export interface RateLimiter {
  /** Synchronous when the decision is local; a promise when it has to ask (the primary, Redis). */
  consume(workspaceId: string, category: RateCategory): RateDecision | null | Promise<RateDecision | null>;
  close(): Promise<void>;
}

export interface Bucket {
  tokens: number;
  /** ms since epoch of the last refill. */
  at: number;
}

/** What is left after one attempt to take a token from a bucket holding `tokens` (already refilled). */
export function decide(rate: number, tokens: number, allowed: boolean, now: number): RateDecision {
  const left = allowed ? tokens - 1 : tokens;
  return {
    allowed,
    limit: rate,
    remaining: Math.max(0, Math.floor(left)),
    reset: Math.ceil((now + ((rate - left) / rate) * 1000) / 1000),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - left) / rate)),
  };
}

/**
 * Refills `bucket` to `now` (mutates it). A `now` before the last refill is a wall clock set back
 * (Date.now and Redis's TIME both follow the system clock): the refill starts again from `now`,
 * where measuring from the later `at` would refill nothing, and refuse every request of an empty
 * bucket, until the clock caught up with it.
 */
function refill(bucket: Bucket, rate: number, now: number): void {
  const elapsed = Math.max(0, now - bucket.at);
  bucket.tokens = Math.min(rate, bucket.tokens + (elapsed * rate) / 1000);
  bucket.at = now;
}

/** Takes one token from `bucket` (refilled to `now` first); mutates it. */
export function take(bucket: Bucket, rate: number, now: number): RateDecision {
  refill(bucket, rate, now);
  const allowed = bucket.tokens >= 1;
  const decision = decide(rate, bucket.tokens, allowed, now);
  if (allowed) bucket.tokens -= 1;
  return decision;
}

/** What one call for the requests of one bucket got (shared.ts); `before`: tokens before taking. */
export interface Taken {
  taken: number;
  before: number;
  leased: number;
}

/**
 * One call for n waiting requests from a process that asks another to keep the bucket (shared.ts,
 * lease.ts): `give` unspent leased tokens back, take up to n, and when all n got theirs lease up
 * to `extra` more from at most half of what is left. redis.ts runs the same steps in Lua.
 */
export function takeMany(bucket: Bucket, rate: number, now: number, n: number, extra: number, give: number): Taken {
  refill(bucket, rate, now);
  bucket.tokens = Math.min(rate, bucket.tokens + give);
  const before = bucket.tokens;
  const taken = Math.min(n, Math.max(0, Math.floor(bucket.tokens)));
  bucket.tokens -= taken;
  let leased = 0;
  if (taken === n) {
    leased = Math.min(extra, Math.floor(bucket.tokens / 2));
    bucket.tokens -= leased;
  }
  return { taken, before, leased };
}

/** Buckets of one process. Full buckets are forgotten, so memory follows the active workspaces. */
export class BucketStore {
  readonly buckets = new Map<string, Bucket>();
  #sweeps = 0;

  take(key: string, rate: number, now = Date.now()): RateDecision {
    const d = take(this.#bucket(key, rate, now), rate, now);
    this.#counted(now);
    return d;
  }

  takeMany(key: string, rate: number, n: number, extra: number, give: number, now = Date.now()): Taken {
    const t = takeMany(this.#bucket(key, rate, now), rate, now, n, extra, give);
    this.#counted(now);
    return t;
  }

  #bucket(key: string, rate: number, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: rate, at: now };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** Sweeps every 10,000 uses, after the use, so the bucket just used is never the one dropped. */
  #counted(now: number): void {
    if (++this.#sweeps >= 10_000) this.sweep(now);
  }

  /**
   * Drops buckets that have refilled completely, which are the same as no bucket at all: with a
   * burst of one second's quota, any bucket untouched for a second is full.
   */
  sweep(now = Date.now()): void {
    this.#sweeps = 0;
    for (const [key, b] of this.buckets) if (now - b.at >= 1000) this.buckets.delete(key);
  }
}

export function bucketKey(workspaceId: string, category: RateCategory): string {
  return `${workspaceId}:${category}`;
}
