// Migration 0021_rank_clustered: on SQLite the ranked index's entries move into a table clustered
// on its key (docs/performance.md §Plans that must not depend on statistics). Every entry survives
// on both databases; on SQLite, with statistics that say nearly every entry is of one scope (one
// big listing), a page still reads the entries of its scope and level through the key, where the
// rowid table was scanned whole.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { rankPage, rankRebuildAll, partitionKey } from '../../src/db/rank/index.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { statementsOf } from '../helpers/sql-spy.ts';
import { useRankSizes } from '../helpers/rank.ts';

const T0 = Date.UTC(2026, 0, 1);
type Entry = { scope: string; level: number; lo_ts: string; lo_id: string; n: number };

for (const dialect of testDialects()) {
  describe(`migration 0021_rank_clustered [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let tdb: TestDb;
    let entries: Entry[];
    const all = async () =>
      (await sql<Entry>`select scope, level, lo_ts, lo_id, n from rank_buckets order by scope, level, lo_ts, lo_id`.execute(tdb.db.kysely)).rows.map((r) => ({
        ...r,
        level: Number(r.level),
        n: Number(r.n),
      }));
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0021' });
      const db = tdb.db.kysely;
      const at = isoNow(T0);
      await sql`insert into workspaces (id, name, created_at) values ('ws_r', 'r', ${at})`.execute(db);
      const rows = Array.from({ length: 200 }, (_, k) => {
        const t = isoNow(T0 + k * 1000);
        return sql`(${`con_${String(k).padStart(4, '0')}`}, 'ws_r', 'contact', null, '{}', ${t}, ${t})`;
      });
      await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at) values ${sql.join(rows)}`.execute(db);
      // As the migrations rank rows (rankRebuild locks the scope, which folds deltas of a table not there yet).
      await rankRebuildAll(db, RECORDS);
      // Entries of another, big listing: 2,000, of which 65 at level 1.
      const big = Array.from({ length: 2000 }, (_, k) => sql`('records:ws_big:contact', ${k % 31 === 0 ? 1 : 0}, ${isoNow(T0 + k)}, ${`con_${k}`}, 500)`);
      await sql`insert into rank_buckets (scope, level, lo_ts, lo_id, n) values ${sql.join(big)}`.execute(db);
      await sql.raw('analyze').execute(db);
      entries = await all();
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('every entry of the ranked index is kept, and pages read as before', async () => {
      assert.deepEqual(await all(), entries);
      assert.ok(entries.filter((e) => e.scope === partitionKey(RECORDS, ['ws_r', 'contact'])).length > 10);
      const page = await rankPage(tdb.db.kysely, RECORDS, ['ws_r', 'contact'], { offset: 120, limit: 25 });
      assert.equal(page.total, 200);
      assert.deepEqual(
        page.rows.map((k) => k.id),
        Array.from({ length: 25 }, (_, i) => `con_${String(199 - 120 - i).padStart(4, '0')}`),
      );
    });

    if (dialect === 'sqlite')
      test('a page reads its entries through the key, whatever the statistics', async () => {
        const db = tdb.db.kysely;
        const ddl = await sql<{ sql: string }>`select sql from sqlite_master where name = 'rank_buckets'`.execute(db);
        assert.match(ddl.rows[0]?.sql ?? '', /without rowid/i);
        // The statistics of an install whose entries are nearly all of one listing's scope.
        await sql.raw('analyze').execute(db);
        await sql`update sqlite_stat1 set stat = '2016 2016 1008 1 1' where tbl = 'rank_buckets'`.execute(db);
        await sql.raw('analyze sqlite_schema').execute(db);
        const { statements } = await statementsOf(() => rankPage(db, RECORDS, ['ws_r', 'contact'], { offset: 120, limit: 25 }));
        const reads = statements.filter((s) => s.includes('rank_buckets'));
        assert.ok(reads.length >= 2, 'the page reads the ranked index');
        for (const s of reads) {
          const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${s}`));
          const steps = plan.rows.map((r) => r.detail).filter((d) => d.includes('rank_buckets'));
          assert.ok(
            steps.length > 0 && steps.every((d) => /^SEARCH rank_buckets USING PRIMARY KEY \(scope=\? AND level=\?/.test(d)),
            `${s}\n${JSON.stringify(steps)}`,
          );
        }
      });
  });
}
