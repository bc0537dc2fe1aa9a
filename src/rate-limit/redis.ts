// The token bucket of bucket.ts on Redis, so that every instance (and every worker) shares one
// bucket per workspace and category. One Lua script refills and takes tokens atomically (the
// steps of bucket.ts `takeMany`), on Redis's own clock, so instances with skewed clocks agree.
//
// When Redis cannot be reached the limiter says so once in the logs, counts every decision made
// without it in metrics, and decides with the local limiter instead: the service keeps serving
// with per-instance limits. Commands fail fast while disconnected (no offline queue) and ioredis
// keeps reconnecting in the background; the first success switches back and is logged too.
//
// A Redis that accepts connections but does not answer (stopped, swapping, a proxy whose far side
// is gone) costs a request at most REDIS_COMMAND_TIMEOUT_MS. Until then Redis is taken for busy,
// not gone, and the shared limit holds: a command late for its deadline, which follows Redis's
// recent answers (deadline.ts; a few milliseconds for a near Redis), has its requests refused at
// once when the level Redis last reported for their bucket refuses them (last-known.ts); the others
// wait for the answer. One unanswered by REDIS_COMMAND_TIMEOUT_MS means a silent Redis: requests are
// decided locally, and Redis is left alone for a second (QUIET_MS) before the next request tries it
// again (docs/reliability.md §Redis).
//
// Every request takes a token. Requests of one bucket that arrive in one turn share one script
// call, and a fast bucket's tokens may be leased (shared.ts): one script run on Redis and one reply
// to parse for many requests. Auto-pipelining then gathers the calls of different buckets issued
// in that turn into one write, and their replies come back in one read. Each call keeps its own
// timeout (docs/performance.md §Redis rate limits: pipelining, one call per bucket, leases).
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/registry.ts';
import type { Limits, RateCategory, RateLimiter } from './bucket.ts';
import { CommandDeadline, CommandUnanswered } from './deadline.ts';
import { type Decision, SharedBuckets } from './shared.ts';

const TAKE_LUA = `
local rate = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local extra = tonumber(ARGV[3])
local give = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = rate
  at = now
end
if now > at then
  tokens = math.min(rate, tokens + (now - at) * rate / 1000)
end
at = now
tokens = math.min(rate, tokens + give)
local before = tokens
local allowed = math.min(n, math.max(0, math.floor(tokens)))
tokens = tokens - allowed
local leased = 0
if allowed == n then
  leased = math.min(extra, math.floor(tokens / 2))
  tokens = tokens - leased
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil((rate - tokens) * 1000 / rate) + 1000)
return {allowed, tostring(before), tostring(now), leased}
`;

/** Tokens taken (of the n asked), the tokens before, Redis's clock in ms, tokens leased. */
type TakeReply = [number, string, string, number];
/** n tokens for the waiting requests, up to `extra` more as a lease, after `give` unspent ones back. */
type LimiterRedis = Redis & { rolodexTake(key: string, rate: number, n: number, extra: number, give: number): Promise<TakeReply> };

export interface RedisLimiterOptions {
  url: string;
  limits: Limits;
  /** Decides while Redis is unreachable. */
  fallback: RateLimiter;
  logger: Logger;
  metrics?: Metrics;
  prefix?: string;
  /** How long leased tokens serve (lease.ts); 0 asks Redis for every request. */
  leaseMs?: number;
  /** Monotonic milliseconds for leases (tests). */
  clock?: () => number;
  /** The longest one command may go unanswered before Redis is taken for silent (deadline.ts). */
  commandTimeoutMs?: number;
  /** The shortest deadline (deadline.ts FLOOR_MS); tests that count script calls raise it to the ceiling. */
  commandFloorMs?: number;
}

/** How long a Redis that let a command time out is left alone. */
const QUIET_MS = 1000;
/** How long start-up waits for Redis before it serves with local limits. */
const START_MS = 1000;
// Redis's answer to a SELECT of a database it does not have (REDIS_URL's `/N` past its
// `databases`): ioredis then goes on in database 0, where another deployment's keys may live.
const DB_REFUSED = /^ERR (DB index is out of range|invalid DB index)/i;

export class RedisRateLimiter implements RateLimiter {
  readonly redis: LimiterRedis;
  readonly #opts: RedisLimiterOptions;
  #degraded = false;
  #closing = false;
  /** Redis refused the database the URL names: the connection is closed for good, limits stay local. */
  #refused = false;
  /** Until when (performance.now()) requests are decided locally after a command timed out. */
  #quietUntil = 0;
  readonly #buckets: SharedBuckets;
  readonly #deadline: CommandDeadline;

  constructor(opts: RedisLimiterOptions) {
    this.#opts = opts;
    this.#deadline = new CommandDeadline(opts.commandTimeoutMs ?? 200, opts.commandFloorMs);
    this.#buckets = new SharedBuckets({
      limits: opts.limits,
      prefix: opts.prefix ?? 'rolodex:rl:',
      take: (key, rate, n, extra, give, late) =>
        this.#deadline
          .within(this.redis.rolodexTake(key, rate, n, extra, give), late, () => this.#silent())
          .then(([taken, before, now, leased]) => {
            // Answering again after a command timed out (the connection itself never dropped).
            if (this.#degraded) this.#up();
            return { taken, before: Number(before), now: Number(now), leased };
          }),
      leaseMs: opts.leaseMs ?? 0,
      ...(opts.clock ? { clock: opts.clock } : {}),
      reachable: () => !this.#refused && this.redis.status === 'ready' && (this.#quietUntil === 0 || performance.now() >= this.#quietUntil),
      alone: (workspaceId, category) => this.#local(workspaceId, category),
      // Closing with requests in flight is not an outage.
      failed: (err) => this.#closing || err instanceof CommandUnanswered || this.#down(err),
      decidedLate: () => this.#opts.metrics?.redisFallbacks.inc(),
    });
    const redis = new Redis(opts.url, {
      lazyConnect: true,
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      retryStrategy: (times) => Math.min(100 * times, 2000),
    });
    redis.defineCommand('rolodexTake', { numberOfKeys: 1, lua: TAKE_LUA });
    // Without a listener ioredis prints every failed reconnect; the state changes are logged below.
    redis.on('error', (err: Error) => (DB_REFUSED.test(err.message) ? this.#refuse(err) : this.#down(err)));
    // A connection the server closes cleanly emits no error, only 'close'.
    redis.on('close', () => this.#closing || this.#down(new Error('connection closed')));
    redis.on('ready', () => this.#refused || this.#up());
    this.redis = redis as LimiterRedis;
    opts.metrics?.redisUp.set(0);
  }

  /** Connects, but never fails start-up: an unreachable Redis means local limits until it returns. */
  async start(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    // A Redis that accepts the connection and never answers would hold start-up: it is waited for
    // START_MS at most, then keeps connecting in the background.
    // Such a Redis fails no connection and never becomes ready: said as an outage, once, so that
    // the log tells that this process keeps limits of its own until it answers.
    const late = new Promise<void>(
      (resolve) =>
        (timer = setTimeout(() => {
          if (this.redis.status !== 'ready') this.#down(new Error(`Redis did not answer within ${START_MS / 1000} s at start`));
          resolve();
        }, START_MS)),
    );
    const started = performance.now();
    try {
      // Connecting ends with Redis's answer to a first command: its time is the first round trip.
      await Promise.race([this.redis.connect().then(() => this.#deadline.answered(performance.now() - started)), late]);
    } catch (err) {
      this.#down(err as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  consume(workspaceId: string, category: RateCategory): Decision {
    return this.#buckets.consume(workspaceId, category);
  }

  #local(workspaceId: string, category: RateCategory): Decision {
    this.#opts.metrics?.redisFallbacks.inc();
    return this.#opts.fallback.consume(workspaceId, category);
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.redis.disconnect();
    await this.#opts.fallback.close();
  }

  /** A command had no answer by the ceiling: Redis is taken for gone, and left alone a while. */
  #silent(): void {
    if (this.#closing) return;
    this.#quietUntil = performance.now() + QUIET_MS;
    this.#down(new Error(`Redis command unanswered after ${this.#opts.commandTimeoutMs ?? 200} ms`));
  }

  /** A configuration error, not an outage: said once, at error level, and never retried. */
  #refuse(err: Error): void {
    if (this.#refused) return;
    this.#refused = true;
    this.#degraded = true;
    this.#opts.metrics?.redisUp.set(0);
    this.#opts.logger.error(
      { err: { message: err.message } },
      'Redis refused the database REDIS_URL names (its /N): rate limits stay in this process until REDIS_URL is corrected',
    );
    this.redis.disconnect();
  }

  #down(err: Error): void {
    this.#opts.metrics?.redisUp.set(0);
    if (this.#degraded) return;
    this.#degraded = true;
    this.#opts.logger.warn({ err: { message: err.message } }, 'Redis unreachable: rate limits fall back to this process until it returns');
  }

  #up(): void {
    this.#quietUntil = 0;
    this.#opts.metrics?.redisUp.set(1);
    if (!this.#degraded) return;
    this.#degraded = false;
    this.#opts.logger.info('Redis reachable again: rate limits are shared again');
  }
}
