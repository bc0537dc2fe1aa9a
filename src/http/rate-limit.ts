// Rate limits (docs/design.md §Rate limits): per workspace and category, a token bucket whose
// capacity (the burst) is one second's quota and which refills continuously at the quota per
// second.
//
// Why a token bucket of our own and not rate-limiter-flexible: its limiters count points in fixed
// windows, which is not the bucket the decisions ask for. A client that spends its quota at the
// end of one window and again at the start of the next gets twice the quota within a few
// milliseconds, and a refused client waits for the window to roll over instead of for one token.
// The bucket here is the same arithmetic in three places: in memory (one process), in the
// cluster primary (workers share it over IPC, rate-limit-cluster.ts) and in one atomic Lua script
// on Redis (instances share it, rate-limit-redis.ts), so every deployment behaves alike.
import type { Logger } from 'pino';
import type { RateCategory } from '../auth/scopes.ts';
import type { Config } from '../config.ts';
import type { RateDecision, RateLimiter } from './context.ts';
import type { Metrics } from './metrics.ts';

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

/** Takes one token from `bucket` (refilled to `now` first); mutates it. */
export function take(bucket: Bucket, rate: number, now: number): RateDecision {
  const elapsed = Math.max(0, now - bucket.at);
  bucket.tokens = Math.min(rate, bucket.tokens + (elapsed * rate) / 1000);
  bucket.at = Math.max(bucket.at, now);
  const allowed = bucket.tokens >= 1;
  const decision = decide(rate, bucket.tokens, allowed, now);
  if (allowed) bucket.tokens -= 1;
  return decision;
}

/** Buckets of one process. Full buckets are forgotten, so memory follows the active workspaces. */
export class BucketStore {
  readonly buckets = new Map<string, Bucket>();
  #sweeps = 0;

  take(key: string, rate: number, now = Date.now()): RateDecision {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: rate, at: now };
      this.buckets.set(key, bucket);
    }
    const d = take(bucket, rate, now);
    if (++this.#sweeps >= 10_000) this.sweep(now);
    return d;
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

export type Limits = Config['rateLimits'];

export function bucketKey(workspaceId: string, category: RateCategory): string {
  return `${workspaceId}:${category}`;
}

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

export function limitsOn(limits: Limits): boolean {
  return limits.Read > 0 || limits.Write > 0 || limits.Search > 0;
}

export interface LimiterOptions {
  /** This process is a cluster worker: local limits are kept by the primary, shared by all workers. */
  worker?: boolean;
  metrics?: Metrics;
  /** Redis key prefix (tests give each run its own). */
  redisPrefix?: string;
  /** The local limiter's clock (tests). */
  clock?: () => number;
}

/**
 * The limiter for this configuration, or undefined when every limit is off. Redis when REDIS_URL
 * is set, with local limits as the fallback while Redis cannot be reached.
 */
export async function createRateLimiter(config: Config, logger: Logger, opts: LimiterOptions = {}): Promise<RateLimiter | undefined> {
  if (!limitsOn(config.rateLimits)) return undefined;
  let local: RateLimiter;
  if (opts.worker) {
    const { ClusterRateLimiter } = await import('./rate-limit-cluster.ts');
    local = new ClusterRateLimiter(config.rateLimits);
  } else {
    local = new MemoryRateLimiter(config.rateLimits, opts.clock);
  }
  if (!config.redisUrl) return local;
  const { RedisRateLimiter } = await import('./rate-limit-redis.ts');
  const redis = new RedisRateLimiter({
    url: config.redisUrl,
    limits: config.rateLimits,
    fallback: local,
    logger,
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    ...(opts.redisPrefix ? { prefix: opts.redisPrefix } : {}),
  });
  await redis.start();
  return redis;
}
