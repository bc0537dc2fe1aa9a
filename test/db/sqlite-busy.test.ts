// A write transaction of the server waits for another process's write lock (a batched
// `rolodex import` sharing the file: docs/import.md §Sharing the database) without stopping the
// process: BEGIN IMMEDIATE is tried again between turns of the event loop (src/db/sqlite/connection.ts,
// beginImmediate), so other requests are served meanwhile, and it fails as before, with
// `database is locked`, once the wait passes its limit. SQLite only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/db/database.ts';
import { beginImmediate } from '../../src/db/sqlite/connection.ts';
import type { Db } from '../../src/db/types.ts';
import { write } from '../../src/db/write.ts';

describe('waiting for the SQLite write lock', () => {
  let dir: string;
  let file: string;
  let db: Db;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rolodex-busy-'));
    file = join(dir, 'rolodex.db');
    db = openDb({ dataDir: dir, sqliteFile: file });
    await sql`create table t (k integer primary key)`.execute(db.kysely);
  });
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a transaction waits for a lock another connection holds while the event loop keeps turning, then runs', async () => {
    // Another process's writer, as a second connection holding the write lock.
    const other = new DatabaseSync(file, { timeout: 0 });
    other.exec('BEGIN IMMEDIATE; INSERT INTO t (k) VALUES (1)');
    let turns = 0;
    const ticker = setInterval(() => turns++, 5);
    // Released by a timer: a wait that blocked the thread would never see it fire.
    const release = setTimeout(() => other.exec('COMMIT'), 200);
    try {
      const n = await write(db.kysely, async (tx) => {
        await sql`insert into t (k) values (2)`.execute(tx);
        return Number((await sql<{ n: number }>`select count(*) as n from t`.execute(tx)).rows[0]?.n);
      });
      assert.equal(n, 2, 'the transaction ran after the other one committed, and saw its row');
      // A wait that held the thread would let no timer fire (not even the release): one turn shows
      // it does not; a busy machine can delay a 5 ms timer to a few turns in 200 ms.
      assert.ok(turns >= 1, `the event loop turned ${turns} times while the transaction waited`);
    } finally {
      clearInterval(ticker);
      clearTimeout(release);
      other.close();
    }
  });

  test('past its limit the wait fails with database is locked, and the connection stays usable', async () => {
    const other = new DatabaseSync(file, { timeout: 0 });
    other.exec('BEGIN IMMEDIATE');
    const raw = new DatabaseSync(file, { timeout: 0 });
    try {
      await assert.rejects(beginImmediate(raw, 50), /database is locked/);
      other.exec('COMMIT');
      await beginImmediate(raw, 50);
      raw.exec('COMMIT');
      const timeout = raw.prepare('PRAGMA busy_timeout').get() as { timeout: number };
      assert.equal(timeout.timeout, 50, 'the busy timeout is set back after the BEGIN');
    } finally {
      if (other.isTransaction) other.exec('ROLLBACK');
      other.close();
      raw.close();
    }
  });
});
