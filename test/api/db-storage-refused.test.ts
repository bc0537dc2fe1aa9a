// A database whose storage refuses writes, as a client and an operator meet it
// (docs/reliability.md §The database's storage): a write answers 503 service_unavailable with
// Retry-After in the documented shape, naming nothing internal; the log says at error what to
// mend; reads go on; once mended, the same write succeeds without a restart.
//
// SQLite's refusal is real: the file may not grow past its pages (`max_page_count`), which SQLite
// answers as a full disk. PostgreSQL's is the server's own answer to a full disk (SQLSTATE 53100),
// raised by a trigger on the table the write fills, since the shared server's disk cannot be filled.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { assertError } from '../helpers/files.ts';

async function refuseWrites(t: TestApp): Promise<() => Promise<void>> {
  const db = t.tdb.db.kysely;
  if (t.dialect === 'sqlite') {
    const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]!.page_count;
    await sql`pragma max_page_count = ${sql.raw(String(pages))}`.execute(db);
    return async () => void (await sql`pragma max_page_count = 1073741823`.execute(db));
  }
  await sql`create function disk_full() returns trigger language plpgsql as $$
    begin raise exception 'could not extend file: No space left on device' using errcode = '53100'; end $$`.execute(db);
  await sql`create trigger disk_full before insert on records for each row execute function disk_full()`.execute(db);
  return async () => {
    await sql`drop trigger disk_full on records`.execute(db);
    await sql`drop function disk_full()`.execute(db);
  };
}

for (const dialect of testDialects()) {
  describe(`a database whose storage refuses writes [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.close());

    test('a write answers 503 and the cause is logged once at error; reads go on; mended, it succeeds', async () => {
      const { secret } = await seedWorkspace(t);
      // Large enough that the record needs pages the file does not have free.
      const body = (i: number) => ({ fields: { $name: `${i}${'x'.repeat(9_000)}` } });
      const mend = await refuseWrites(t);
      try {
        for (let i = 0; i < 3; i++) {
          const res = await call(t, secret, 'POST', '/v1/accounts', body(i));
          const error = assertError(res, 503, 'service_unavailable');
          assert.equal(res.headers['retry-after'], '1');
          assert.doesNotMatch(JSON.stringify(error), /full|disk|53100|SQLITE|stack/i);
        }
        assert.equal((await call(t, secret, 'GET', '/v1/accounts')).statusCode, 200);
      } finally {
        await mend();
      }
      // One line for the three, at error, naming the cause without a stack
      // (docs/reliability.md §Operational faults in the log).
      const lines = t
        .logs()
        .split('\n')
        .filter((l) => l.includes('the database cannot store writes'))
        .map((l) => JSON.parse(l) as { level: number; msg: string; reason: string; stack?: string });
      assert.equal(lines.length, 1, t.logs().slice(-2000));
      assert.equal(lines[0]!.level, 50);
      assert.equal(lines[0]!.msg, 'the database cannot store writes; writes are answered 503 until it is mended');
      assert.match(lines[0]!.reason, /^(the disk holding the database is full|the database server's disk is full)/);
      assert.ok(!t.logs().includes('"stack"'), 'a line carries a stack');
      const res = await call(t, secret, 'POST', '/v1/accounts', body(0));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await call(t, secret, 'GET', '/v1/accounts')).json<{ totalCount: number }>().totalCount, 1);
    });
  });
}
