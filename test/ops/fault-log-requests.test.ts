// What the log says of failures that are no bug, met by many requests alike, and of one that is
// (docs/reliability.md §Operational faults in the log): statements that the database cancels at
// DATABASE_STATEMENT_TIMEOUT_MS are one line without a stack for all the requests answered 503,
// while an unexpected error (a 500) logs its stack each time. The slow statements are filtered
// listings that wait on a table another session holds locked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, seedWorkspace, buildTestApp, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { type FaultApp, faultApp, lockTable } from '../helpers/faults.ts';

interface Line {
  msg: string;
  level: number;
  code?: string;
  reason?: string;
  err?: { stack?: string };
}

const linesOf = (text: string): Line[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line)
    .filter((l) => l.msg !== 'request');

for (const dialect of testDialects()) {
  describe(`an unexpected error [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, {
        routes: (app) => {
          app.get('/v1/test/bug', { config: { operation: 'testBug', scopes: [], category: 'Read' } }, () => {
            throw new TypeError("Cannot read properties of undefined (reading 'id')");
          });
        },
      });
    });
    after(() => t.close());

    test('is answered 500 and logs its stack each time', async () => {
      const { secret } = await seedWorkspace(t);
      const from = t.logs().length;
      for (let i = 0; i < 3; i++) {
        const res = await call(t, secret, 'GET', '/v1/test/bug');
        assert.equal(res.statusCode, 500, res.body);
        assert.equal(res.json().error.code, 'internal_error');
      }
      const lines = linesOf(t.logs().slice(from));
      assert.deepEqual(
        lines.map((l) => [l.level, l.msg]),
        Array.from({ length: 3 }, () => [50, 'unhandled error']),
      );
      for (const l of lines) assert.match(l.err?.stack ?? '', /TypeError: Cannot read properties/);
    });
  });
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`statements cancelled at the statement timeout [${dialect}]`, () => {
    let f: FaultApp;
    before(async () => {
      f = await faultApp({ env: { DATABASE_STATEMENT_TIMEOUT_MS: '1000' } });
    });
    after(() => f.close());

    test('requests answered 503 log one line without a stack, naming the timeout', async () => {
      const s = await seedWorkspace(f.t);
      const filtered = `/v1/contacts?${encodeURIComponent('$email[contains]')}=engine`;
      assert.equal((await call(f.t, s.secret, 'GET', filtered)).statusCode, 200);
      const from = f.t.logs().length;
      // The trigram index, which the filter reads, is held by another session: each listing's
      // statement waits until the database cancels it.
      const lock = await lockTable(f.t.tdb.schema!, 'record_trigrams', f.appName);
      try {
        for (let i = 0; i < 3; i++) {
          const res = await call(f.t, s.secret, 'GET', filtered);
          assert.equal(res.statusCode, 503, res.body);
          assert.equal(res.headers['retry-after'], '1');
          assert.equal(res.json().error.code, 'service_unavailable');
        }
      } finally {
        await lock.release();
      }
      const lines = linesOf(f.t.logs().slice(from));
      assert.deepEqual(
        lines.map((l) => [l.level, l.msg, l.code]),
        [[40, 'database statement timed out; requests whose statements run past DATABASE_STATEMENT_TIMEOUT_MS are answered 503', '57014']],
      );
      assert.match(lines[0]!.reason ?? '', /statement timeout/);
      assert.ok(!f.t.logs().slice(from).includes('"stack"'), 'a line carries a stack');
      assert.equal(f.t.app.faults.statementTimeout.down, true);
    });
  });
}
