// Faults (docs/reliability.md §Faults): PostgreSQL backends terminated under load, PostgreSQL
// refusing connections, and what the database layer must survive underneath: a statement that
// fails after sending rows, a batched read that cannot be sorted. Behaviour is asserted, not
// timings: no crash and no promise rejection left unhandled, a 503 in the documented shape (never a
// 500, never the framework's shape, never an internal code or address), every request answered,
// and recovery once the fault ends. A silent Redis: test/ops/rate-limit-silent.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { batchedRead } from '../../src/db/batched.ts';
import { call, seedWorkspace } from '../helpers/app.ts';
import { createTestDb, testDialects } from '../helpers/db.ts';
import { drive, type FaultApp, faultApp, figures, lockTable, terminator } from '../helpers/faults.ts';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
before(() => process.on('unhandledRejection', onUnhandled));
after(() => process.off('unhandledRejection', onUnhandled));

// Longer than any wait the service allows itself (DATABASE_STATEMENT_TIMEOUT_MS and its grace):
// a request not answered by then hangs.
const HANG_MS = 15_000;
const ENV = { DATABASE_STATEMENT_TIMEOUT_MS: '2000' };

for (const dialect of testDialects()) {
  describe(`the database layer under faults [${dialect}]`, () => {
    test('a batched read whose rows cannot be sorted fails its callers instead of leaving them waiting', async () => {
      const t = await createTestDb(dialect);
      try {
        const read = batchedRead<{ id: string }>({
          query: () => sql`select 'a' as id`.$castTo<{ id: string }>() as never,
          keyOf: () => {
            throw new TypeError('a row that is not there');
          },
          single: async () => [{ id: 'a' }],
          many: async () => [{ id: 'a' }],
        });
        const outcome = await Promise.race([
          Promise.allSettled([read(t.db.kysely, 'a'), read(t.db.kysely, 'b')]),
          new Promise((resolve) => setTimeout(resolve, 5000, 'still waiting')),
        ]);
        assert.notEqual(outcome, 'still waiting');
        assert.deepEqual(
          (outcome as PromiseSettledResult<unknown>[]).map((s) => s.status),
          ['rejected', 'rejected'],
        );
        assert.deepEqual(unhandled, []);
      } finally {
        await t.drop();
      }
    });
  });
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`PostgreSQL faults [${dialect}]`, () => {
    test('a statement that fails after sending rows leaves the next one its own rows, no more', async () => {
      const t = await createTestDb(dialect);
      try {
        const db = t.db.kysely;
        // Division by zero on row 5,000: PostgreSQL has sent rows before the error.
        await assert.rejects(sql`select case when g < 5000 then g else 1 / (g - g) end as n from generate_series(1, 6000) g`.execute(db));
        const { rows } = await sql<{ n: number }>`select g as n from generate_series(1, 3) g`.execute(db);
        assert.deepEqual(rows, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      } finally {
        await t.drop();
      }
    });

    describe('backends terminated under load', () => {
      let f: FaultApp;
      before(async () => {
        f = await faultApp({ env: ENV });
      });
      after(() => f.close());

      test('no crash, every request answered, 503s in the documented shape and nothing internal, then recovery', async () => {
        const s = await seedWorkspace(f.t);
        const made = await call(f.t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'Kept', $objectType: 'account' } });
        assert.equal(made.statusCode, 200, made.body);
        const killer = terminator(f.appName, 700);
        const during = figures(await drive(f.base, s.secret, made.json().id as string, { seconds: 6, connections: 8, timeoutMs: HANG_MS }));
        const terminated = await killer.stop();
        assert.ok(terminated > 0, 'backends were terminated');
        const note = JSON.stringify(during);
        assert.equal(during.unanswered, 0, note);
        assert.deepEqual(during.other, {}, note);
        assert.equal(during.unshaped, 0, note);
        assert.equal(during.leaks, 0, note);
        assert.ok(during.ok > 0, note);
        // Recovery: once the terminations stop, the service answers again by itself.
        let recovered = false;
        for (let i = 0; i < 50 && !recovered; i++) {
          const res = await call(f.t, s.secret, 'GET', `/v1/lists/${made.json().id}`);
          const write = await call(f.t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'After', $objectType: 'account' } });
          recovered = res.statusCode === 200 && write.statusCode === 200;
          if (!recovered) await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(recovered, 'reads and writes succeed again');
        assert.equal((await f.t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
        assert.deepEqual(unhandled, []);
      });
    });

    describe('a slow scan', () => {
      // The listing waits until the database cancels it at its statement timeout; a read queued
      // behind it could not be answered sooner, so one answered within HELD_MS was not.
      const HELD_MS = 3000;
      let f: FaultApp;
      before(async () => {
        f = await faultApp({ env: { DATABASE_STATEMENT_TIMEOUT_MS: String(2 * HELD_MS) } });
      });
      after(() => f.close());

      test('a filtered listing held up holds up no point read, and answers 503 when the database cancels it at its timeout', async () => {
        const s = await seedWorkspace(f.t);
        const made = await call(f.t, s.secret, 'POST', '/v1/contacts', {
          fields: { $name: { firstName: 'Ada', lastName: 'Lovelace' }, $email: ['ada@engine.example'] },
        });
        assert.equal(made.statusCode, 200, made.body);
        const get = (path: string) =>
          fetch(f.base + path, { headers: { authorization: `Bearer ${s.secret}`, 'service-version': '2026-03-01' }, signal: AbortSignal.timeout(HANG_MS) });
        const filtered = `/v1/contacts?${encodeURIComponent('$email[contains]')}=engine`;
        // The trigram index, which the filter reads and a point read does not, is held by another
        // session: the listing's statement waits as a slow scan runs.
        const lock = await lockTable(f.t.tdb.schema!, 'record_trigrams', f.appName);
        let listing: Promise<Response>;
        try {
          listing = get(filtered);
          await lock.waiting();
          // Sent after the listing's statement, on the same process: answered while it waits.
          const reads = Promise.all([get(`/v1/contacts/${made.json().id}`), get('/v1/lists?limit=5')]).then((rs) => rs.map((r) => r.status));
          const outcome = await Promise.race([reads, new Promise((r) => setTimeout(r, HELD_MS, 'held up'))]);
          assert.deepEqual(outcome, [200, 200], 'point reads do not wait behind the scan');
          // The database cancels the listing's statement at DATABASE_STATEMENT_TIMEOUT_MS.
          const res = await listing;
          const body = await res.text();
          assert.equal(res.status, 503, body);
          assert.equal(res.headers.get('retry-after'), '1');
          assert.equal(JSON.parse(body).error.code, 'service_unavailable');
          assert.doesNotMatch(body, /57014|statement timeout|statusCode/);
        } finally {
          await lock.release();
        }
        const after = await get(filtered);
        assert.equal(after.status, 200);
        assert.equal(((await after.json()) as { totalCount: number }).totalCount, 1);
        assert.deepEqual(unhandled, []);
      });
    });

    describe('PostgreSQL refusing connections', () => {
      let f: FaultApp;
      before(async () => {
        // Nothing listens on port 1: every connection is refused.
        f = await faultApp({ env: ENV, databaseUrl: (url) => url.replace(/@[^/]+\//, '@127.0.0.1:1/') });
      });
      after(() => f.close());

      test('every request answers 503 service_unavailable with Retry-After, /readyz fails, /healthz lives', async () => {
        const key = `rdx_abcdefgh_${'a'.repeat(43)}`;
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            fetch(`${f.base}${i % 2 ? '/v1/lists' : '/v1/lists/lst_x'}`, {
              headers: { authorization: `Bearer ${key}`, 'service-version': '2026-03-01' },
              signal: AbortSignal.timeout(HANG_MS),
            }).then(async (r) => ({ status: r.status, retry: r.headers.get('retry-after'), body: await r.text() })),
          ),
        );
        for (const a of answers) {
          assert.equal(a.status, 503, a.body);
          assert.equal(a.retry, '1');
          assert.equal(JSON.parse(a.body).error.code, 'service_unavailable');
          assert.doesNotMatch(a.body, /ECONNREFUSED|127\.0\.0\.1|statusCode/);
        }
        const ready = await fetch(`${f.base}/readyz`, { signal: AbortSignal.timeout(HANG_MS) });
        assert.equal(ready.status, 503);
        assert.equal(((await ready.json()) as { error: { code: string } }).error.code, 'service_unavailable');
        assert.equal((await fetch(`${f.base}/healthz`, { signal: AbortSignal.timeout(HANG_MS) })).status, 200);
        assert.deepEqual(unhandled, []);
      });
    });
  });
}
