// A Redis that accepts connections but never answers (docs/reliability.md §Redis): start-up does
// not wait for it, a command it leaves unanswered costs its requests REDIS_COMMAND_TIMEOUT_MS at
// most, and the requests after it are decided on local buckets without asking it, as with a Redis
// that is down. Asserted on behaviour: which requests asked Redis, what they were answered.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { createRateLimiter } from '../../src/rate-limit/factory.ts';
import { CommandDeadline, FLOOR_MS } from '../../src/rate-limit/deadline.ts';
import { MemoryRateLimiter } from '../../src/rate-limit/memory.ts';
import { RedisRateLimiter } from '../../src/rate-limit/redis.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { IN_CI, services, TEST_REDIS_URL } from '../helpers/services.ts';

const limits = { Read: 2, Write: 2, Search: 2 };

/** A TCP server that accepts connections and never writes a byte; or, with `upstream`, a relay to Redis that can go silent or slow. */
async function silentServer(upstream?: string): Promise<{ url: string; silence(): void; delay(ms: number): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let silent = !upstream;
  let delayMs = 0;
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
    // Slow, each answer is held `delayMs`, in order.
    let queue = Promise.resolve();
    up.on('data', (c) => {
      if (silent) return;
      const ms = delayMs;
      queue = queue.then(() => (ms ? new Promise((r) => setTimeout(r, ms)) : undefined)).then(() => void client.write(c));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    silence: () => (silent = true),
    delay: (ms) => (delayMs = ms),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

function limiter(url: string, commandTimeoutMs = 25, rates = limits, prefix = `test:${randomBytes(6).toString('hex')}:`) {
  const logger = createLogger('info', new Writable({ write: (_c, _e, cb) => cb() }));
  return new RedisRateLimiter({
    url,
    limits: rates,
    prefix,
    fallback: new MemoryRateLimiter(rates),
    logger,
    commandTimeoutMs,
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

  // It was said nowhere: the connection never failed, it only never became ready, and the log
  // stayed silent while every instance kept limits of its own.
  test('start-up says once that the limits fall back to this process', async () => {
    const s = await silentServer();
    let text = '';
    const logger = createLogger('info', new Writable({ write: (c, _e, cb) => ((text += String(c)), cb()) }));
    const l = new RedisRateLimiter({ url: s.url, limits, prefix: 'test:start:', fallback: new MemoryRateLimiter(limits), logger, commandTimeoutMs: 25 });
    try {
      await l.start();
      await l.consume('ws', 'Read');
      await new Promise((r) => setTimeout(r, 100));
      const lines = text.split('\n').filter((line) => /Redis unreachable/.test(line));
      assert.equal(lines.length, 1, text);
      assert.equal(JSON.parse(lines[0]!).level, 40);
      assert.match(JSON.parse(lines[0]!).err.message, /did not answer within 1 s/);
    } finally {
      await l.close();
      await s.close();
    }
  });
});

const { redis } = services();
if (redis || IN_CI) {
  describe('a Redis that stops answering on an open connection', () => {
    test('the request that meets the silence is decided locally, and so are the next ones, without asking Redis', async () => {
      const s = await silentServer(TEST_REDIS_URL);
      // A ceiling a loaded machine's Redis replies stay under, so that only the silence is silent.
      const l = limiter(s.url, 300);
      try {
        await l.start();
        assert.equal(l.redis.status, 'ready');
        const calls = countCalls(l);
        assert.equal((await l.consume('ws', 'Read'))?.allowed, true);
        assert.equal(calls.n, 1, 'asked while Redis answers');
        s.silence();
        // The first request after the silence waits for REDIS_COMMAND_TIMEOUT_MS, then local buckets decide.
        assert.equal((await l.consume('ws', 'Write'))?.allowed, true);
        assert.equal(calls.n, 2);
        // Unanswered past REDIS_COMMAND_TIMEOUT_MS (300 ms here), the command means a silent Redis.
        await new Promise((r) => setTimeout(r, 350));
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

describe("a command's deadline", () => {
  test('follows how fast Redis answered, between the floor and REDIS_COMMAND_TIMEOUT_MS', () => {
    const d = new CommandDeadline(200);
    assert.equal(d.ms, 200, 'nothing answered yet: the ceiling');
    for (let i = 0; i < 20; i++) d.answered(0.3);
    assert.equal(d.ms, FLOOR_MS, 'prompt answers: the floor');
    for (let i = 0; i < 20; i++) d.answered(30 + (i % 2) * 20);
    const late: number = d.ms;
    assert.ok(late >= 40 && late < 200, `answers read 30-50 ms late: ${late} ms`);
    for (let i = 0; i < 20; i++) d.answered(5000);
    assert.equal(d.ms, 200, 'never above the ceiling');
  });
});

if (redis || IN_CI) {
  describe('a Redis that falls silent after answering promptly', () => {
    test('refuses a request of a spent bucket within a few milliseconds; one it may allow waits REDIS_COMMAND_TIMEOUT_MS at most', async () => {
      const s = await silentServer(TEST_REDIS_URL);
      const l = limiter(s.url, 1000);
      try {
        await l.start();
        for (let i = 0; i < 30; i++) assert.equal((await l.consume(`ws${i}`, 'Read'))?.allowed, true);
        // Redis reports the bucket spent (Read: 2 a second).
        const spent = await Promise.all([1, 2, 3].map(() => Promise.resolve(l.consume('ws', 'Read'))));
        assert.deepEqual(
          spent.map((d) => d?.allowed),
          [true, true, false],
        );
        s.silence();
        let started = performance.now();
        assert.equal((await l.consume('ws', 'Read'))?.allowed, false);
        let waited = performance.now() - started;
        assert.ok(waited < 500, `waited ${Math.round(waited)} ms for a refusal`);
        // Nothing known refuses this one: it waits for Redis, then for the ceiling, then local buckets decide.
        started = performance.now();
        assert.equal((await l.consume('ws', 'Write'))?.allowed, true);
        waited = performance.now() - started;
        assert.ok(waited >= 900 && waited < 3000, `waited ${Math.round(waited)} ms, REDIS_COMMAND_TIMEOUT_MS is 1000`);
      } finally {
        await l.close();
        await s.close();
      }
    });
  });

  describe('a Redis that answers late', () => {
    test('keeps the shared limit: late requests are refused on the level Redis last reported, or wait for its answer', async () => {
      const s = await silentServer(TEST_REDIS_URL);
      const rates = { Read: 20, Write: 20, Search: 20 };
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const [a, b] = [limiter(s.url, 2000, rates, prefix), limiter(s.url, 2000, rates, prefix)] as const;
      try {
        await Promise.all([a.start(), b.start()]);
        // Prompt answers bring each deadline down to a few milliseconds.
        for (let i = 0; i < 20; i++) for (const l of [a, b]) assert.equal((await l.consume(`warm${i}`, 'Read'))?.allowed, true);
        // One call of `a` takes the whole bucket; `b` is then refused, once it has taken any token
        // that came back since (one each 50 ms): both last heard of the bucket empty.
        const drainStarted = performance.now();
        const drained = await Promise.all(Array.from({ length: 20 }, () => Promise.resolve(a.consume('ws', 'Read'))));
        assert.ok(drained.every((d) => d?.allowed));
        for (let refilled = 0; (await b.consume('ws', 'Read'))?.allowed; refilled++) {
          const back = Math.floor(((performance.now() - drainStarted) * rates.Read) / 1000);
          assert.ok(refilled < back, `b was allowed ${refilled + 1} requests from a drained bucket; ${back} tokens came back`);
        }
        const started = performance.now();
        s.delay(30);
        let passed = 0;
        for (let turn = 0; turn < 3; turn++) {
          const ds = await Promise.all(Array.from({ length: 10 }, (_, i) => Promise.resolve((i % 2 ? a : b).consume('ws', 'Read'))));
          passed += ds.filter((d) => d?.allowed).length;
        }
        s.delay(0);
        // Each process sees the bucket refill, not the other's requests: at most twice the refill.
        const bound = Math.ceil((2 * (performance.now() - started) * rates.Read) / 1000) + 2;
        assert.ok(passed <= bound, `${passed} passed while Redis answered late; at most ${bound}`);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await s.close();
      }
    });
  });

  describe('a Redis that answers late, for a bucket last seen full or never asked', () => {
    test('keeps the shared limit: no process allows on its own view while its calls are late', async () => {
      const s = await silentServer(TEST_REDIS_URL);
      const rates = { Read: 20, Write: 20, Search: 20 };
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const [a, b] = [limiter(s.url, 5000, rates, prefix), limiter(s.url, 5000, rates, prefix)] as const;
      try {
        await Promise.all([a.start(), b.start()]);
        // Prompt answers bring each deadline down to a few milliseconds; both see 'seen' nearly full.
        for (let i = 0; i < 50; i++) for (const l of [a, b]) assert.equal((await l.consume(`warm${i}`, 'Read'))?.allowed, true);
        for (const l of [a, b]) assert.equal((await l.consume('seen', 'Read'))?.allowed, true);
        s.delay(50);
        const started = performance.now();
        // Requests arriving over several turns, as HTTP requests do, half on each process.
        const decisions: Promise<{ allowed: boolean } | null>[][] = [[], []];
        for (let turn = 0; turn < 10; turn++) {
          for (let i = 0; i < 10; i++)
            for (const [j, ws] of (['seen', 'fresh'] as const).entries()) decisions[j]!.push(Promise.resolve((i % 2 ? a : b).consume(ws, 'Read')));
          await new Promise((r) => setTimeout(r, 2));
        }
        const [seen, fresh] = await Promise.all(decisions.map((ds) => Promise.all(ds)));
        const seconds = (performance.now() - started) / 1000;
        s.delay(0);
        // One bucket's burst and its refill, as one process alone would pass: not one burst each.
        const bound = Math.floor(rates.Read + rates.Read * seconds);
        for (const [name, ds] of [
          ['seen', seen],
          ['fresh', fresh],
        ] as const) {
          const passed = ds!.filter((d) => d?.allowed).length;
          assert.ok(passed <= bound, `${name}: ${passed} of 100 passed in ${seconds.toFixed(2)} s while Redis answered late; at most ${bound}`);
        }
      } finally {
        await Promise.all([a.close(), b.close()]);
        await s.close();
      }
    });
  });

  describe('a busy event loop', () => {
    test('a reply that came within the deadline but was read after it is not taken for a silent Redis', async () => {
      const l = limiter(TEST_REDIS_URL, 5);
      try {
        await l.start();
        const calls = countCalls(l);
        // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its own `this` below
        const take = l.redis.rolodexTake;
        let busy = true;
        l.redis.rolodexTake = function (this: typeof l.redis, ...args) {
          const out = take.apply(this, args);
          // Once the command is written, the loop is kept busy for a second: the reply is in the
          // socket long before that (Redis answers within a millisecond, within a few hundred on a
          // machine loaded by other test processes), and the command's 5 ms deadline has passed
          // before the loop reads it.
          if (busy)
            setImmediate(() => {
              const until = performance.now() + 1000;
              while (performance.now() < until);
            });
          return out;
        };
        assert.equal((await l.consume('ws', 'Read'))?.allowed, true);
        busy = false;
        assert.equal(calls.n, 1);
        assert.equal((await l.consume('ws', 'Read'))?.allowed, true);
        assert.equal(calls.n, 2, 'Redis is asked again: the first command was not counted late');
      } finally {
        await l.close();
      }
    });
  });
}

// Through the HTTP API, on both databases, with REDIS_URL pointing at a server that never answers.
let silent: Awaited<ReturnType<typeof silentServer>>;
before(async () => {
  silent = await silentServer();
});
after(() => silent.close());
eachDialect(
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
    env: () => ({ RATE_LIMIT_READ: '3', REDIS_URL: silent.url }),
    deps: async (deps, config) => {
      deps.rateLimiter = await createRateLimiter(config, deps.logger, { clock: () => 0 });
    },
  },
);
