// A batched import starts SQLite's write-ahead log again once it is past its bound
// (docs/import.md §Sharing the database, The log stays short), and copies it first with a PASSIVE
// checkpoint, which takes no write lock, so that the RESTART that holds the server's writes copies
// only what they added meanwhile. Pins the checkpoints' order; bench/log-restart.ts measures the
// write lock's hold. PostgreSQL has no such log: nothing is run there.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { LOG_BOUND, restartLongLog } from '../../src/db/log-bound.ts';
import { WAL_LIMIT } from '../../src/db/sqlite/pin.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

for (const dialect of testDialects()) {
  describe(`the log's restart [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
    });
    after(async () => {
      await tdb.drop();
    });

    test('a log past its bound is copied without the write lock, then started again', async () => {
      const db = tdb.db.kysely;
      const wal = join(tdb.dataDir, 'rolodex.db-wal');
      if (dialect === 'sqlite') {
        // One more megabyte of pages than the bound, in the log: a reader on its first snapshot
        // meanwhile keeps the automatic checkpoints from starting it again, as a server's do.
        const reader = new DatabaseSync(join(tdb.dataDir, 'rolodex.db'));
        reader.exec('begin');
        reader.prepare('select count(*) from sqlite_schema').get();
        await sql`create table log_pad (b blob)`.execute(db);
        for (let i = 0; i <= LOG_BOUND / 2 ** 20; i++) await sql`insert into log_pad values (${Buffer.alloc(2 ** 20, i)})`.execute(db);
        reader.exec('commit');
        reader.close();
        assert.ok(statSync(wal).size > LOG_BOUND, `the log holds ${statSync(wal).size} bytes`);
      }

      const { statements } = await statementsOf(() => restartLongLog(db));
      const checkpoints = statements.filter((s) => /wal_checkpoint/i.test(s)).map((s) => /\((\w+)\)/.exec(s)?.[1]);
      assert.deepEqual(checkpoints, dialect === 'sqlite' ? ['PASSIVE', 'RESTART'] : []);

      if (dialect === 'sqlite') {
        // The next write starts the log from its beginning, and cuts the file to its limit.
        await sql`insert into log_pad values (${Buffer.alloc(16, 1)})`.execute(db);
        const [rows] = (await sql<{ n: number }>`select count(*) as n from log_pad`.execute(db)).rows;
        assert.equal(rows?.n, LOG_BOUND / 2 ** 20 + 2);
        assert.ok(statSync(wal).size <= WAL_LIMIT, `the log holds ${statSync(wal).size} bytes after the restart`);
      }
    });
  });
}
