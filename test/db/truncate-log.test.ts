// After a purge, `truncateLog` empties SQLite's write-ahead log so that it keeps no copy of what
// was erased (docs/trash.md §Purge). A reader may hold the log meanwhile: the function tries again
// until the reader lets go, and waits between tries without holding this process's thread, so that
// a reader let go by this thread (a read-slot pin's timer) can let go. PostgreSQL has no such log.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { truncateLog } from '../../src/db/erase.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

for (const dialect of testDialects()) {
  describe(`truncating the log after a purge [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
    });
    after(async () => {
      await tdb.drop();
    });

    test('waits for a reader of this process without holding the thread, then empties the log', async () => {
      const db = tdb.db.kysely;
      if (dialect !== 'sqlite') {
        const { statements } = await statementsOf(() => truncateLog(tdb.db));
        assert.deepEqual(statements, []);
        return;
      }
      const wal = join(tdb.dataDir, 'rolodex.db-wal');
      await sql`create table erased (v text)`.execute(db);
      await sql`insert into erased values ('canary')`.execute(db);
      // A reader on the log's latest snapshot, let go only by this thread's timer.
      const reader = new DatabaseSync(join(tdb.dataDir, 'rolodex.db'));
      reader.exec('begin');
      reader.prepare('select count(*) from erased').get();
      assert.ok(statSync(wal).size > 0);
      const start = performance.now();
      let letGoAt = 0;
      const letGo = setTimeout(() => {
        reader.exec('commit');
        letGoAt = performance.now();
      }, 200);
      try {
        await truncateLog(tdb.db);
      } finally {
        clearTimeout(letGo);
        if (reader.isTransaction) reader.exec('commit');
        reader.close();
      }
      assert.equal(statSync(wal).size, 0);
      assert.ok(letGoAt > 0, 'the log was truncated while the reader held it');
      // SQLite's busy handler would have held the thread, and the reader, for its whole 5 s timeout.
      const held = letGoAt - start - 200;
      assert.ok(held < 2500, `the reader could let go only ${Math.round(held)} ms late`);
    });
  });
}
