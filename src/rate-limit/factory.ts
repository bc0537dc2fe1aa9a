// Which limiter a configuration gets (docs/design.md §Rate limits): none when every limit is off,
// local buckets (memory.ts, or the cluster primary's through cluster.ts in a worker), and Redis in
// front of those when REDIS_URL is set.
//
// Why a token bucket of our own and not rate-limiter-flexible: its limiters count points in fixed
// windows, which is not the bucket the design asks for. A client that spends its quota at the end
// of one window and again at the start of the next gets twice the quota within a few
// milliseconds, and a refused client waits for the window to roll over instead of for one token.
// The bucket (bucket.ts) is the same arithmetic in three places: in memory (one process,
// memory.ts), in the cluster primary (workers share it over IPC, cluster.ts) and in one atomic
// Lua script on Redis (instances share it, redis.ts), so every deployment behaves alike. The two
// shared ones are asked through shared.ts, which also leases a fast bucket's tokens (lease.ts).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { Limits, RateLimiter } from './bucket.ts';
import { MemoryRateLimiter } from './memory.ts';

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
    const { ClusterRateLimiter } = await import('./cluster.ts');
    local = new ClusterRateLimiter(config.rateLimits, config.rateLimitLeaseMs);
  } else {
    local = new MemoryRateLimiter(config.rateLimits, opts.clock);
  }
  if (!config.redisUrl) return local;
  const { RedisRateLimiter } = await import('./redis.ts');
  const redis = new RedisRateLimiter({
    url: config.redisUrl,
    limits: config.rateLimits,
    leaseMs: config.rateLimitLeaseMs,
    commandTimeoutMs: config.redisCommandTimeoutMs,
    fallback: local,
    logger,
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    ...(opts.redisPrefix ? { prefix: opts.redisPrefix } : {}),
  });
  await redis.start();
  return redis;
}
