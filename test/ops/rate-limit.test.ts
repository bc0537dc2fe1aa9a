// Rate limits (docs/design.md §Rate limits) through the HTTP API, on both databases: headers on
// every answer of a request the limit counts and on none answered before it, burst then 429 with
// Retry-After and no effect, isolation by workspace and category.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMetrics } from '../../src/metrics/registry.ts';
import { BucketStore, take } from '../../src/rate-limit/bucket.ts';
import { createRateLimiter } from '../../src/rate-limit/factory.ts';
import { MemoryRateLimiter } from '../../src/rate-limit/memory.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { pipelineRoutes } from '../helpers/pipeline-routes.ts';

const LIMITS = { RATE_LIMIT_READ: '5', RATE_LIMIT_WRITE: '3', RATE_LIMIT_SEARCH: '4' };

// The limiter's clock stands still unless a test moves it, so slow machines cannot refill a bucket
// between two requests of a test.
let now = Date.now();
const clock = () => now;

function rateHeaders(res: { headers: Record<string, unknown> }) {
  return {
    limit: Number(res.headers['x-ratelimit-limit']),
    remaining: Number(res.headers['x-ratelimit-remaining']),
    reset: Number(res.headers['x-ratelimit-reset']),
  };
}

async function countUsers(t: TestApp, workspaceId: string): Promise<number> {
  const rows = await t.deps.db.kysely.selectFrom('users').select('id').where('workspace_id', '=', workspaceId).execute();
  return rows.length;
}

describe('token bucket arithmetic', () => {
  test('burst of one second, continuous refill, Retry-After and Reset', () => {
    const b = { tokens: 10, at: 0 };
    for (let i = 0; i < 10; i++) assert.equal(take(b, 10, 0).allowed, true);
    const refused = take(b, 10, 0);
    assert.deepEqual(refused, { allowed: false, limit: 10, remaining: 0, reset: 1, retryAfter: 1 });
    assert.equal(take(b, 10, 50).allowed, false, 'half a token is not a token');
    const back = take(b, 10, 100);
    assert.equal(back.allowed, true);
    assert.equal(back.remaining, 0);
    const later = take(b, 10, 60_000);
    assert.equal(later.remaining, 9, 'the bucket never holds more than one second of quota');
    assert.equal(later.reset, 61);
  });

  test('a wall clock set back restarts the refill from the new time, in a process and in the cluster primary', () => {
    // An empty bucket, then the system clock stepped back an hour (NTP, a VM resumed).
    const b = { tokens: 1, at: 3_600_000 };
    take(b, 1, 3_600_000);
    assert.equal(take(b, 1, 0).allowed, false, 'no time is known to have passed');
    assert.equal(take(b, 1, 1000).allowed, true, 'a second on the new clock refills a token');
    const store = new BucketStore();
    store.takeMany('k', 2, 2, 0, 0, 3_600_000);
    assert.equal(store.takeMany('k', 2, 1, 0, 0, 0).taken, 0);
    assert.equal(store.takeMany('k', 2, 1, 0, 0, 500).taken, 1);
  });

  test('a slow quota asks for a longer wait', () => {
    const b = { tokens: 1, at: 0 };
    take(b, 1, 0);
    assert.equal(take(b, 1, 0).retryAfter, 1);
    const store = new BucketStore();
    store.take('k', 2, 0);
    store.sweep(1500);
    assert.equal(store.buckets.size, 0, 'a full bucket is forgotten');
  });

  test('a category set to 0 is not limited', async () => {
    const limiter = new MemoryRateLimiter({ Read: 0, Write: 1, Search: 1 });
    assert.equal(limiter.consume('ws', 'Read'), null);
    assert.equal(limiter.consume('ws', 'Write')?.allowed, true);
    assert.equal(limiter.consume('ws', 'Write')?.allowed, false);
  });
});

eachDialect(
  'rate limits',
  (ctx) => {
    test('every answer of a counted request carries the three X-RateLimit headers', async () => {
      const t = ctx();
      const s = await seedWorkspace(t, { scopes: ['lists:read'] });
      const before = Math.floor(now / 1000);
      const ok = await call(t, s.secret, 'GET', '/v1/auth/validate');
      assert.equal(ok.statusCode, 200);
      const h = rateHeaders(ok);
      assert.equal(h.limit, 5);
      assert.equal(h.remaining, 4);
      assert.ok(h.reset >= before && h.reset <= before + 2, `reset ${h.reset} is in Unix seconds`);
      assert.equal(rateHeaders(await call(t, s.secret, 'GET', '/v1/auth/validate')).remaining, 3);
      // Refused later in the pipeline (scope, validation): the headers are there too.
      const forbidden = await call(t, s.secret, 'POST', '/v1/test/echo', { name: 'a' });
      assert.equal(forbidden.statusCode, 403);
      assert.equal(rateHeaders(forbidden).limit, 3);
      const invalid = await call(t, s.secret, 'GET', '/v1/test/page?limit=99');
      assert.equal(invalid.statusCode, 400);
      assert.deepEqual([rateHeaders(invalid).limit, rateHeaders(invalid).remaining], [4, 3]);
    });

    test('answers given before the limit is checked carry no X-RateLimit headers and count for nothing', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const refused = [
        await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { 'service-version': '2026-03-01' } }),
        await call(t, 'rdx_unknown0_' + 'A'.repeat(43), 'GET', '/v1/auth/validate'),
        await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { authorization: `Bearer ${s.secret}` } }),
        await call(t, s.secret, 'GET', '/v1/no-such-route'),
      ];
      assert.deepEqual(
        refused.map((r) => r.statusCode),
        [401, 401, 400, 404],
      );
      for (const r of refused) {
        assert.deepEqual(
          Object.keys(r.headers).filter((h) => h.startsWith('x-ratelimit')),
          [],
          `${r.statusCode} ${r.json().error.code}`,
        );
      }
      assert.equal(rateHeaders(await call(t, s.secret, 'GET', '/v1/auth/validate')).remaining, 4, 'the refusals took no token');
      // Refused after it (the body, in Fastify's parsing): counted, and the headers say so.
      const notJson = await t.app.inject({
        method: 'POST',
        url: '/v1/test/echo',
        headers: { authorization: `Bearer ${s.secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json' },
        payload: '{',
      });
      assert.equal(notJson.statusCode, 400);
      assert.deepEqual([rateHeaders(notJson).limit, rateHeaders(notJson).remaining], [3, 2]);
    });

    test('a burst of one second is served, then 429 rate_limited with Retry-After', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const results = await Promise.all(Array.from({ length: 8 }, () => call(t, s.secret, 'GET', '/v1/auth/validate')));
      assert.equal(results.filter((r) => r.statusCode === 200).length, 5);
      const refused = results.filter((r) => r.statusCode === 429);
      assert.equal(refused.length, 3);
      const r = refused[0]!;
      const body = r.json();
      assert.equal(body.error.code, 'rate_limited');
      assert.equal(body.error.type, 'too_many_requests');
      assert.equal(body.error.requestId, r.headers['x-request-id']);
      assert.equal(r.headers['retry-after'], '1');
      assert.equal(rateHeaders(r).remaining, 0);
      assert.equal(rateHeaders(r).limit, 5);
      now += 150;
      assert.equal((await call(t, s.secret, 'GET', '/v1/auth/validate')).statusCode, 429, '5/s: no token back after 150 ms');
      now += 100;
      assert.equal((await call(t, s.secret, 'GET', '/v1/auth/validate')).statusCode, 200);
    });

    test('a refused write changes nothing and its Idempotency-Key stays unused', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (let i = 0; i < 3; i++) assert.equal((await call(t, s.secret, 'POST', '/v1/test/users', { email: `ok${i}@example.test` })).statusCode, 200);
      const refused = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'late@example.test' }, { 'idempotency-key': 'late-1' });
      assert.equal(refused.statusCode, 429);
      assert.equal(await countUsers(t, s.workspaceId), 4, 'the seeded user and three created ones');
      now += 400;
      const retried = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'late@example.test' }, { 'idempotency-key': 'late-1' });
      assert.equal(retried.statusCode, 200);
      assert.equal(retried.headers['idempotent-replayed'], undefined, 'the 429 was not stored');
      assert.equal(await countUsers(t, s.workspaceId), 5);
    });

    test('workspaces have separate buckets', async () => {
      const t = ctx();
      const a = await seedWorkspace(t);
      const b = await seedWorkspace(t);
      for (let i = 0; i < 5; i++) await call(t, a.secret, 'GET', '/v1/auth/validate');
      assert.equal((await call(t, a.secret, 'GET', '/v1/auth/validate')).statusCode, 429);
      const other = await call(t, b.secret, 'GET', '/v1/auth/validate');
      assert.equal(other.statusCode, 200);
      assert.equal(rateHeaders(other).remaining, 4);
    });

    test('categories have separate buckets', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (let i = 0; i < 5; i++) await call(t, s.secret, 'GET', '/v1/auth/validate');
      assert.equal((await call(t, s.secret, 'GET', '/v1/auth/validate')).statusCode, 429);
      const search = await call(t, s.secret, 'GET', '/v1/test/page');
      assert.equal(search.statusCode, 200);
      assert.equal(rateHeaders(search).limit, 4);
      const write = await call(t, s.secret, 'POST', '/v1/test/echo', { name: 'a' });
      assert.equal(write.statusCode, 200);
      assert.equal(rateHeaders(write).limit, 3);
    });

    test('refusals are counted in /metrics', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (let i = 0; i < 7; i++) await call(t, s.secret, 'GET', '/v1/auth/validate');
      const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      const m = /rolodex_rate_limited_total\{operation="validateCredential",category="Read"\} (\d+)/.exec(text);
      assert.ok(m && Number(m[1]) >= 2, text.slice(0, 200));
    });
  },
  {
    env: LIMITS,
    routes: pipelineRoutes,
    deps: async (deps, config) => {
      deps.metrics = createMetrics({ defaults: false });
      const limiter = await createRateLimiter(config, deps.logger, { metrics: deps.metrics, clock });
      assert.ok(limiter instanceof MemoryRateLimiter);
      deps.rateLimiter = limiter;
    },
  },
);
