// The SQLite connection on a writer thread of `rolodex import` (src/db/sqlite/writer.ts): statements
// run in the order sent; inside a transaction a deferred statement is not waited for, and its
// error is the error of the next statement awaited, after which the transaction rolls back whole
// and the connection serves the next one. SQLite only: the thread is how node:sqlite, which runs
// on the calling thread, gets a second core.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { isUniqueViolation, openDb } from '../../src/db/database.ts';
import { deferred, deferredOn, deferredRows } from '../../src/db/pipeline.ts';
import { THREAD_QUEUE } from '../../src/db/sqlite/writer.ts';
import type { Db } from '../../src/db/types.ts';
import { write } from '../../src/db/write.ts';

describe('the SQLite writer thread', () => {
  let dir: string;
  let db: Db;
  const count = async () => Number((await sql<{ n: number }>`select count(*) as n from t`.execute(db.kysely)).rows[0]?.n);
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rolodex-writer-'));
    db = openDb({ dataDir: dir, writerThread: true });
    await sql`create table t (k integer primary key, v text not null)`.execute(db.kysely);
  });
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('deferred statements run in order without being awaited; the next awaited one sees them all', async () => {
    const saved = { ...THREAD_QUEUE };
    Object.assign(THREAD_QUEUE, { statements: 3 });
    try {
      const sent = await write(db.kysely, async (tx) => {
        for (let k = 0; k < 200; k++) await deferred(tx, sql`insert into t (k, v) values (${k}, ${`v${k}`})`);
        await deferred(tx, sql`update t set v = 'last' where k = 199`);
        return (await sql<{ n: number; v: string }>`select count(*) as n, max(case when k = 199 then v end) as v from t`.execute(tx)).rows[0];
      });
      assert.deepEqual({ ...sent }, { n: 200, v: 'last' });
      assert.equal(await count(), 200);
    } finally {
      Object.assign(THREAD_QUEUE, saved);
    }
  });

  test("a deferred statement's error fails the next awaited statement, and the whole transaction rolls back", async () => {
    const before = await count();
    let reached = false;
    await assert.rejects(
      write(db.kysely, async (tx) => {
        await deferred(tx, sql`insert into t (k, v) values (1000, 'a')`);
        await deferred(tx, sql`insert into t (k, v) values (1000, 'again')`);
        await deferred(tx, sql`insert into t (k, v) values (1001, 'after')`);
        await sql`select 1`.execute(tx);
        reached = true;
      }),
      (err: unknown) => isUniqueViolation(err),
    );
    assert.equal(reached, false);
    assert.equal(await count(), before);
    // The connection serves the next transaction, and COMMIT reports a deferred error too.
    await assert.rejects(
      write(db.kysely, async (tx) => {
        await deferred(tx, sql`insert into t (k, v) values (2000, 'a')`);
        await deferred(tx, sql`insert into t (k, v) values (2000, 'b')`);
      }),
      (err: unknown) => isUniqueViolation(err),
    );
    assert.equal(await count(), before);
    await write(db.kysely, (tx) => deferred(tx, sql`insert into t (k, v) values (3000, 'c')`));
    assert.equal(await count(), before + 1);
  });

  test('a deferred statement whose rows are read after COMMIT (deferredRows) gets them', async () => {
    const out = await write(db.kysely, (tx) => deferredRows<{ k: number }>(tx, sql`insert into t (k, v) values (4000, 'd') returning k`));
    assert.deepEqual(
      out.rows?.map((r) => r.k),
      [4000],
    );
  });

  test('outside a transaction a deferred statement is awaited, and its error is its own', async () => {
    await assert.rejects(deferredOn(db.kysely, sql`insert into t (k, v) values (4000, 'twice')`), (err: unknown) => isUniqueViolation(err));
  });
});
