// Migration 0022_rank_deltas: the table of count deltas that creates taking their scope's lock
// shared write (docs/pages.md §Creates that only insert), and the end of the write-only
// workspace_list_counts. From a database at 0021 holding lists: every list, every ranked entry and
// every page stay as they were, the counter is gone, and creates after it count right.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { write } from '../../src/db/write.ts';
import { rankPage, rankRebuildAll, rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { insertList, LISTS } from '../../src/lists/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { checkEntries, checkPages, useRankSizes } from '../helpers/rank.ts';

const T0 = Date.UTC(2026, 0, 1);

for (const dialect of testDialects()) {
  describe(`migration 0022_rank_deltas [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let tdb: TestDb;
    let entries: unknown[];
    const all = async () => (await sql`select scope, level, lo_ts, lo_id, n from rank_buckets order by scope, level, lo_ts, lo_id`.execute(tdb.db.kysely)).rows;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0022' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_l', 'l', ${isoNow(T0)})`.execute(db);
      const rows = Array.from({ length: 60 }, (_, k) => {
        const at = isoNow(T0 + k * 1000);
        return sql`(${`lst_${String(k).padStart(4, '0')}`}, 'ws_l', ${`l${k}`}, 'account', 0, ${at}, ${at})`;
      });
      await sql`insert into lists (id, workspace_id, name, object_type, member_count, created_at, updated_at) values ${sql.join(rows)}`.execute(db);
      await sql`insert into workspace_list_counts (workspace_id, list_count) values ('ws_l', 60)`.execute(db);
      await rankRebuildAll(db, LISTS);
      entries = await all();
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('lists, entries and pages are kept; the counter is gone', async () => {
      const db = tdb.db.kysely;
      assert.deepEqual(await all(), entries);
      assert.equal((await checkEntries(db, LISTS, ['ws_l'])).total, 60);
      await checkPages(db, LISTS, ['ws_l'], { limit: 7 });
      await assert.rejects(sql`select count(*) from workspace_list_counts`.execute(db));
      const d = await sql<{ c: number }>`select count(*) as c from rank_deltas`.execute(db);
      assert.equal(Number(d.rows[0]?.c), 0);
    });

    test('creates after it are counted and pages stay exact', async () => {
      const db = tdb.db.kysely;
      for (let k = 60; k < 80; k++) {
        const at = isoNow(T0 + k * 1000);
        const row = {
          id: `lst_${String(k).padStart(4, '0')}`,
          workspace_id: 'ws_l',
          external_id: null,
          name: `l${k}`,
          object_type: 'account' as const,
          member_count: 0,
          created_at: at,
          updated_at: at,
        };
        await write(db, (tx) => insertList(tx, row), { followUpFailed: (err) => assert.fail(String(err)) });
      }
      await rankUpkeepSettled();
      assert.equal((await checkEntries(db, LISTS, ['ws_l'])).total, 80);
      await checkPages(db, LISTS, ['ws_l'], { limit: 7 });
      const first = await rankPage(db, LISTS, ['ws_l'], { offset: 0, limit: 3 });
      assert.deepEqual(
        first.rows.map((k) => k.id),
        ['lst_0079', 'lst_0078', 'lst_0077'],
      );
    });
  });
}
