// Rate limits shared through Redis: one bucket for all instances, and local limits (logged and
// counted) while Redis cannot be reached, switching back when it returns.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import type { RateLimiter } from '../../src/rate-limit/bucket.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics, type Metrics } from '../../src/metrics/registry.ts';
import { createRateLimiter } from '../../src/rate-limit/factory.ts';
import { MemoryRateLimiter } from '../../src/rate-limit/memory.ts';
import { RedisRateLimiter } from '../../src/rate-limit/redis.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { IN_CI, services, TEST_REDIS_URL } from '../helpers/services.ts';
import { freePort } from '../helpers/process.ts';

const limits = { Read: 2, Write: 2, Search: 2 };
const scratch = mkdtempSync(join(tmpdir(), 'rolodex-rl-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const config = (env: Record<string, string> = {}) => loadConfig({ DATA_DIR: scratch, SIGNING_SECRET: 'x'.repeat(32), ...env });

function capture() {
  const lines: string[] = [];
  const logger = createLogger('info', new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
  return { logger, text: () => lines.join('') };
}

/** A limiter as the server builds one (leases of 10 ms by default: none at these slow limits). */
function limiter(url: string, prefix: string, metrics?: Metrics, o: { limits?: typeof limits; clock?: () => number; leaseMs?: number } = {}) {
  const log = capture();
  const lim = o.limits ?? limits;
  const l = new RedisRateLimiter({
    url,
    limits: lim,
    prefix,
    fallback: new MemoryRateLimiter(lim),
    logger: log.logger,
    leaseMs: o.leaseMs ?? config().rateLimitLeaseMs,
    // The calls these tests count are Redis's to answer however busy the machine: no adaptive deadline.
    commandTimeoutMs: 1000,
    commandFloorMs: 1000,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(metrics ? { metrics } : {}),
  });
  return { l, log };
}

/** Records the (n, extra, give) of each script call `l` makes. */
function spy(l: RedisRateLimiter): number[][] {
  // Unbound: ioredis's auto-pipeline calls the command again with the pipeline as `this`.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its own `this` below
  const take = l.redis.rolodexTake;
  const asked: number[][] = [];
  l.redis.rolodexTake = function (this: typeof l.redis, key, rate, n, extra, give) {
    if (this === l.redis) asked.push([n, extra, give]);
    return take.call(this, key, rate, n, extra, give);
  };
  return asked;
}

/** A TCP relay to Redis that a test can cut and restore, to play an outage. */
function relay(port: number) {
  const target = new URL(TEST_REDIS_URL);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  return {
    async open() {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 6379), target.hostname);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const end = () => (client.destroy(), upstream.destroy());
        client.on('error', end).on('close', end);
        upstream.on('error', end).on('close', end);
      });
      await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    },
    async cut() {
      const s = server;
      for (const sock of sockets) sock.destroy();
      sockets.clear();
      if (s) await new Promise((r) => s.close(r));
    },
  };
}

async function until(fn: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const { redis } = services();
if (redis || IN_CI) {
  describe('rate limits on Redis', () => {
    const open: RateLimiter[] = [];
    after(async () => {
      for (const l of open) await l.close();
    });

    test('two instances share one bucket, atomically', async () => {
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const a = limiter(TEST_REDIS_URL, prefix);
      const b = limiter(TEST_REDIS_URL, prefix);
      open.push(a.l, b.l);
      await Promise.all([a.l.start(), b.l.start()]);
      const decisions = await Promise.all(Array.from({ length: 10 }, (_, i) => Promise.resolve((i % 2 ? a.l : b.l).consume('ws_1', 'Read'))));
      assert.equal(decisions.filter((d) => d?.allowed).length, 2, 'a burst of 2 across both instances');
      const refused = decisions.find((d) => !d?.allowed)!;
      assert.equal(refused.limit, 2);
      assert.equal(refused.remaining, 0);
      assert.equal(refused.retryAfter, 1);
      assert.ok(refused.reset >= Math.floor(Date.now() / 1000));
      assert.equal((await b.l.consume('ws_2', 'Read'))?.allowed, true, 'another workspace');
      assert.equal((await b.l.consume('ws_1', 'Write'))?.allowed, true, 'another category');
      await new Promise((r) => setTimeout(r, 600)); // 2/s: one token back every 500 ms
      assert.equal((await a.l.consume('ws_1', 'Read'))?.allowed, true);
      assert.ok(!a.log.text().includes('unreachable'));
    });

    test("a bucket last refilled later than Redis's clock now says (a clock set back) refills from now", async () => {
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const { l } = limiter(TEST_REDIS_URL, prefix);
      open.push(l);
      await l.start();
      // Empty, as last refilled an hour ahead of Redis's clock: what a clock stepped back leaves.
      const [seconds] = await l.redis.time();
      await l.redis.hset(`${prefix}ws:Read`, 'tokens', '0', 'at', String((Number(seconds) + 3600) * 1000));
      assert.equal((await l.consume('ws', 'Read'))?.allowed, false);
      await new Promise((r) => setTimeout(r, 600)); // 2/s: one token back every 500 ms
      assert.equal((await l.consume('ws', 'Read'))?.allowed, true);
    });

    test('requests of one bucket in the same turn share one script call, with the decisions of calls in a row', async () => {
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const { l } = limiter(TEST_REDIS_URL, prefix);
      open.push(l);
      await l.start();
      const asked = spy(l);
      const decisions = await Promise.all([...Array.from({ length: 5 }, () => l.consume('ws_1', 'Read')), l.consume('ws_1', 'Write')]);
      assert.deepEqual(
        asked.sort((a, b) => a[0]! - b[0]!),
        [
          [1, 0, 0],
          [5, 0, 0],
        ],
        'one call for the five reads, one for the write; a bucket of 2/s leases nothing',
      );
      assert.deepEqual(
        decisions.map((d) => [d?.allowed, d?.remaining, d?.retryAfter]),
        [
          [true, 1, 0],
          [true, 0, 0],
          [false, 0, 1],
          [false, 0, 1],
          [false, 0, 1],
          [true, 1, 0],
        ],
      );
      // The batch took only what it was given: the bucket refills from zero, not below it.
      await new Promise((r) => setTimeout(r, 600));
      assert.equal((await l.consume('ws_1', 'Read'))?.allowed, true);
    });

    test('a fast bucket leases tokens: what the last lease spent, doubled, up to 10 ms of refill', async () => {
      let now = 0;
      const fast = { Read: 1000, Write: 1000, Search: 1000 };
      const { l } = limiter(TEST_REDIS_URL, `test:${randomBytes(6).toString('hex')}:`, undefined, { limits: fast, clock: () => now });
      open.push(l);
      await l.start();
      const asked = spy(l);
      const decisions = [];
      for (let i = 0; i < 20; i++) decisions.push(await l.consume('ws_1', 'Read'));
      assert.deepEqual(
        asked,
        [1, 2, 4, 8, 10].map((extra) => [1, extra, 0]),
        '20 requests in 5 calls; a lease holds at most 1000/s × 10 ms',
      );
      assert.ok(decisions.every((d) => d?.allowed));
      assert.equal(decisions[0]?.remaining, 999);
      assert.equal(decisions[1]?.remaining, 998, 'a leased token counts as taken from the bucket');
      assert.ok(!(l.consume('ws_1', 'Read') instanceof Promise), 'a lease answers without waiting');
      assert.equal(asked.length, 5);
      // Past 10 ms the lease's 9 unspent tokens no longer serve: they go back with the next call.
      now += 10;
      assert.equal((await l.consume('ws_1', 'Read'))?.allowed, true);
      assert.deepEqual(asked.at(-1), [1, 2, 9], 'the lease spent 1: the next asks 2 and gives 9 back');
      assert.equal((await l.consume('ws_2', 'Read'))?.allowed, true);
      assert.deepEqual(asked.at(-1), [1, 1, 0], 'each bucket has its own lease');
      const exact = limiter(TEST_REDIS_URL, `test:${randomBytes(6).toString('hex')}:`, undefined, { limits: fast, leaseMs: 0 });
      open.push(exact.l);
      await exact.l.start();
      const exactAsked = spy(exact.l);
      for (let i = 0; i < 3; i++) await exact.l.consume('ws_1', 'Read');
      assert.deepEqual(
        exactAsked,
        [
          [1, 0, 0],
          [1, 0, 0],
          [1, 0, 0],
        ],
        'RATE_LIMIT_LEASE_MS=0: every request asks Redis',
      );
    });

    test('the script gives back first, and leases only after every waiting request, at most half of what is left', async () => {
      const { l } = limiter(TEST_REDIS_URL, `test:${randomBytes(6).toString('hex')}:`);
      open.push(l);
      await l.start();
      const key = 'rl:bucket';
      // Sent in one write (auto-pipelining), so Redis runs them back to back: at 10/s the bucket
      // refills by far less than a token meanwhile.
      const replies = await Promise.all([
        l.redis.rolodexTake(key, 10, 1, 100, 0), // 10 → 1 taken, 4 leased (half of 9), 5 left
        l.redis.rolodexTake(key, 10, 6, 100, 0), // 5: 5 of 6 taken, nothing leased
        l.redis.rolodexTake(key, 10, 1, 0, 0), // empty: refused
        l.redis.rolodexTake(key, 10, 1, 0, 4), // 4 given back: taken
        l.redis.rolodexTake(key, 10, 1, 0, 100), // given back past the burst: capped at 10
      ]);
      assert.deepEqual(
        replies.map(([taken, before, , leased]) => [taken, Math.floor(Number(before)), leased]),
        [
          [1, 10, 4],
          [5, 5, 0],
          [0, 0, 0],
          [1, 4, 0],
          [1, 10, 0],
        ],
      );
    });

    test('with leases, two instances together never pass more than the bucket and one lease', async () => {
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const rate = { Read: 200, Write: 200, Search: 200 };
      const [a, b] = [0, 1].map(() => limiter(TEST_REDIS_URL, prefix, undefined, { limits: rate, leaseMs: 50 }).l) as [RedisRateLimiter, RedisRateLimiter];
      open.push(a, b);
      await Promise.all([a.start(), b.start()]);
      const started = performance.now();
      let allowed = 0;
      for (let turn = 0; turn < 60; turn++) {
        const ds = await Promise.all(Array.from({ length: 10 }, (_, i) => Promise.resolve((i % 2 ? a : b).consume('ws_1', 'Read'))));
        allowed += ds.filter((d) => d?.allowed).length;
      }
      const refill = Math.ceil(((performance.now() - started) * 200) / 1000);
      // 200 in the bucket, what it refilled meanwhile, and one lease of 200/s × 50 ms.
      assert.ok(allowed <= 200 + refill + 10, `${allowed} passed; at most ${200 + refill + 10}`);
      // Tokens held in the two leases are the most that can be refused while the bucket has them.
      assert.ok(allowed >= 200 - 2 * 10, `${allowed} passed; at least ${200 - 20}`);
    });

    test('RATE_LIMIT_LEASE_MS is 10 by default, 0 to 100', () => {
      assert.equal(config().rateLimitLeaseMs, 10);
      assert.equal(config({ RATE_LIMIT_LEASE_MS: '0' }).rateLimitLeaseMs, 0);
      assert.throws(() => config({ RATE_LIMIT_LEASE_MS: '101' }), /RATE_LIMIT_LEASE_MS/);
    });

    test('a database Redis refuses (REDIS_URL /99) is said once and leaves the limits local, never database 0', async () => {
      const metrics = createMetrics({ defaults: false });
      const url = new URL(TEST_REDIS_URL);
      url.pathname = '/99';
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const { l, log } = limiter(url.toString(), prefix, metrics);
      open.push(l);
      await l.start();
      await until(() => /Redis refused the database/.test(log.text()), 2000);
      const decided = await Promise.all([1, 2, 3].map(() => Promise.resolve(l.consume('ws', 'Read'))));
      assert.deepEqual(
        decided.map((d) => d?.allowed),
        [true, true, false],
        'local limits',
      );
      assert.equal((await metrics.redisUp.get()).values[0]?.value, 0);
      assert.equal((await metrics.redisFallbacks.get()).values[0]?.value, 3);
      assert.doesNotMatch(log.text(), /reachable again/);
      // Nothing of this limiter's in database 0.
      const zero = limiter(TEST_REDIS_URL, prefix).l;
      open.push(zero);
      await zero.start();
      assert.deepEqual(await zero.redis.keys(`${prefix}*`), []);
    });

    test('an outage falls back to local limits, is logged and counted, and ends when Redis returns', async () => {
      const port = await freePort();
      const r = relay(port);
      await r.open();
      const metrics = createMetrics({ defaults: false });
      const { l, log } = limiter(`redis://127.0.0.1:${port}`, `test:${randomBytes(6).toString('hex')}:`, metrics);
      open.push(l);
      await l.start();
      assert.equal((await l.consume('ws', 'Read'))?.allowed, true);
      assert.equal((await metrics.redisFallbacks.get()).values[0]?.value, 0);
      assert.equal((await metrics.redisUp.get()).values[0]?.value, 1);
      await r.cut();
      await until(() => l.redis.status !== 'ready', 2000);
      const during = await Promise.all([1, 2, 3].map(() => Promise.resolve(l.consume('ws', 'Read'))));
      assert.deepEqual(
        during.map((d) => d?.allowed),
        [true, true, false],
        'local limits hold during the outage',
      );
      assert.match(log.text(), /Redis unreachable/);
      assert.equal((await metrics.redisFallbacks.get()).values[0]?.value, 3);
      assert.equal((await metrics.redisUp.get()).values[0]?.value, 0);
      await r.open();
      await until(() => l.redis.status === 'ready', 5000);
      assert.match(log.text(), /Redis reachable again/);
      await l.consume('ws', 'Write');
      assert.equal((await metrics.redisFallbacks.get()).values[0]?.value, 3, 'decided on Redis again');
      await r.cut();
    });
  });
}

// Through the HTTP API with REDIS_URL pointing at a port where nothing listens.
let closedPort: number;
before(async () => {
  closedPort = await freePort();
});
eachDialect(
  'rate limits with Redis unreachable',
  (ctx) => {
    test('the server keeps serving with local limits and says so in the logs', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await call(t, s.secret, 'GET', '/v1/auth/validate'));
      assert.deepEqual(
        results.map((r) => r.statusCode),
        [200, 200, 200, 429],
      );
      assert.equal(results[0]!.headers['x-ratelimit-limit'], '3');
      assert.match(t.logs(), /Redis unreachable/);
      const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(text, /rolodex_rate_limit_redis_fallback_total [4-9]/);
    });
  },
  {
    env: () => ({ RATE_LIMIT_READ: '3', REDIS_URL: `redis://127.0.0.1:${closedPort}` }),
    deps: async (deps, config) => {
      assert.equal(loadConfig({ REDIS_URL: config.redisUrl!, DATA_DIR: config.dataDir }).redisUrl, config.redisUrl);
      deps.metrics = createMetrics({ defaults: false });
      const l = await createRateLimiter(config, deps.logger, { metrics: deps.metrics, clock: () => 0 });
      assert.ok(l instanceof RedisRateLimiter);
      deps.rateLimiter = l;
    },
  },
);
