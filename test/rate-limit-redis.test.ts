// Rate limits shared through Redis: one bucket for all instances, and local limits (logged and
// counted) while Redis cannot be reached, switching back when it returns.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import type { RateLimiter } from '../src/rate-limit/bucket.ts';
import { createLogger } from '../src/logger.ts';
import { createMetrics, type Metrics } from '../src/metrics/registry.ts';
import { createRateLimiter } from '../src/rate-limit/factory.ts';
import { MemoryRateLimiter } from '../src/rate-limit/memory.ts';
import { RedisRateLimiter } from '../src/rate-limit/redis.ts';
import { call, eachDialect, seedWorkspace } from './helpers/app.ts';
import { IN_CI, services, TEST_REDIS_URL } from './helpers/services.ts';
import { freePort } from './helpers/process.ts';

const limits = { Read: 2, Write: 2, Search: 2 };

function capture() {
  const lines: string[] = [];
  const logger = createLogger('info', new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
  return { logger, text: () => lines.join('') };
}

function limiter(url: string, prefix: string, metrics?: Metrics) {
  const log = capture();
  const l = new RedisRateLimiter({ url, limits, prefix, fallback: new MemoryRateLimiter(limits), logger: log.logger, ...(metrics ? { metrics } : {}) });
  return { l, log };
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

const { redis } = await services();
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
      const decisions = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a.l : b.l).consume('ws_1', 'Read')));
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

    test('requests of one bucket in the same turn share one script call, with the decisions of calls in a row', async () => {
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const { l } = limiter(TEST_REDIS_URL, prefix);
      open.push(l);
      await l.start();
      // Unbound: ioredis's auto-pipeline calls the command again with the pipeline as `this`.
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its own `this` below
      const take = l.redis.rolodexTake;
      const asked: number[] = [];
      l.redis.rolodexTake = function (this: typeof l.redis, key, rate, n) {
        if (this === l.redis) asked.push(n);
        return take.call(this, key, rate, n);
      };
      const decisions = await Promise.all([...Array.from({ length: 5 }, () => l.consume('ws_1', 'Read')), l.consume('ws_1', 'Write')]);
      assert.deepEqual(asked.sort(), [1, 5], 'one call for the five reads, one for the write');
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
      const during = await Promise.all([1, 2, 3].map(() => l.consume('ws', 'Read')));
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
const closedPort = await freePort();
await eachDialect(
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
    env: { RATE_LIMIT_READ: '3', REDIS_URL: `redis://127.0.0.1:${closedPort}` },
    deps: async (deps, config) => {
      assert.equal(loadConfig({ REDIS_URL: config.redisUrl!, DATA_DIR: config.dataDir }).redisUrl, config.redisUrl);
      deps.metrics = createMetrics({ defaults: false });
      const l = await createRateLimiter(config, deps.logger, { metrics: deps.metrics, clock: () => 0 });
      assert.ok(l instanceof RedisRateLimiter);
      deps.rateLimiter = l;
    },
  },
);
