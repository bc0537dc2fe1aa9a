// A Redis that accepts connections but never answers (docs/reliability.md §Redis): start-up does
// not wait for it, a command it leaves unanswered costs its requests REDIS_COMMAND_TIMEOUT_MS at
// most, and the requests after it are decided on local buckets without asking it, as with a Redis
// that is down. Asserted on behaviour: which requests asked Redis, what they were answered.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { createRateLimiter } from '../../src/rate-limit/factory.ts';
import { MemoryRateLimiter } from '../../src/rate-limit/memory.ts';
import { RedisRateLimiter } from '../../src/rate-limit/redis.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { IN_CI, services, TEST_REDIS_URL } from '../helpers/services.ts';

const limits = { Read: 2, Write: 2, Search: 2 };

/** A TCP server that accepts connections and never writes a byte; or, with `upstream`, a relay to Redis that can go silent. */
async function silentServer(upstream?: string): Promise<{ url: string; silence(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let silent = !upstream;
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => {});
    if (!upstream) return;
    const target = new URL(upstream);
    const up = connect(Number(target.port || 6379), target.hostname);
    sockets.add(up);
    up.on('error', () => {});
    client.on('data', (c) => up.write(c));
    // Once silent, what Redis answers is dropped: the connection stays open, the answers never come.
    up.on('data', (c) => silent || client.write(c));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    silence: () => (silent = true),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

function limiter(url: string) {
  const logger = createLogger('info', new Writable({ write: (_c, _e, cb) => cb() }));
  return new RedisRateLimiter({
    url,
    limits,
    prefix: `test:${randomBytes(6).toString('hex')}:`,
    fallback: new MemoryRateLimiter(limits),
    logger,
    commandTimeoutMs: 25,
  });
}

/** Counts the script calls `l` sends to Redis. */
function countCalls(l: RedisRateLimiter): { n: number } {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its own `this` below
  const take = l.redis.rolodexTake;
  const count = { n: 0 };
  l.redis.rolodexTake = function (this: typeof l.redis, ...args) {
    if (this === l.redis) count.n++;
    return take.apply(this, args);
  };
  return count;
}

describe('a Redis that accepts connections and never answers', () => {
  test('start-up goes on without it, and requests are decided on local buckets without asking it', async () => {
    const s = await silentServer();
    const l = limiter(s.url);
    try {
      await l.start();
      const calls = countCalls(l);
      const decisions = await Promise.all([1, 2, 3].map(() => Promise.resolve(l.consume('ws', 'Read'))));
      assert.deepEqual(
        decisions.map((d) => d?.allowed),
        [true, true, false],
      );
      assert.equal(calls.n, 0, 'never ready: not asked');
    } finally {
      await l.close();
      await s.close();
    }
  });
});

const { redis } = await services();
if (redis || IN_CI) {
  describe('a Redis that stops answering on an open connection', () => {
    test('the request that meets the silence is decided locally, and so are the next ones, without asking Redis', async () => {
      const s = await silentServer(TEST_REDIS_URL);
      const l = limiter(s.url);
      try {
        await l.start();
        assert.equal(l.redis.status, 'ready');
        const calls = countCalls(l);
        assert.equal((await l.consume('ws', 'Read'))?.allowed, true);
        assert.equal(calls.n, 1, 'asked while Redis answers');
        s.silence();
        // The first request after the silence waits for its command's deadline, then local buckets decide.
        assert.equal((await l.consume('ws', 'Write'))?.allowed, true);
        assert.equal(calls.n, 2);
        const next = await Promise.all([1, 2].map(() => Promise.resolve(l.consume('ws', 'Write'))));
        assert.deepEqual(
          next.map((d) => d?.allowed),
          [true, false],
          'local limits hold',
        );
        assert.equal(calls.n, 2, 'Redis is left alone after a command timed out');
        assert.equal(l.redis.status, 'ready', 'the connection itself never dropped');
      } finally {
        await l.close();
        await s.close();
      }
    });
  });
}

// Through the HTTP API, on both databases, with REDIS_URL pointing at a server that never answers.
const silent = await silentServer();
after(() => silent.close());
await eachDialect(
  'the API with a silent Redis',
  (ctx) => {
    test('requests are answered with local limits', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await call(t, s.secret, 'GET', '/v1/auth/validate'));
      assert.deepEqual(
        results.map((r) => r.statusCode),
        [200, 200, 200, 429],
      );
    });
  },
  {
    env: { RATE_LIMIT_READ: '3', REDIS_URL: silent.url },
    deps: async (deps, config) => {
      deps.rateLimiter = await createRateLimiter(config, deps.logger, { clock: () => 0 });
    },
  },
);
