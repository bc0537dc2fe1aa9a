// Counting a ranked scope from its rows (rankRebuild, src/db/rank/build.ts) reads the scope's rows
// a fixed number of times, whatever PostgreSQL's statistics say. An import rebuilds a scope right
// after writing its rows, on statistics from before them (docs/performance.md §Bulk import): the
// planner then made the scope's count the inner side of a nested loop and counted the scope again
// for every row, so that 20,000 contacts took minutes. Counted here through the transaction's own
// statistics of index scans (pg_stat_xact_user_tables).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { settled } from '../../src/db/pipeline.ts';
import { systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { rankPage, rankRebuild } from '../../src/db/rank/index.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { write } from '../../src/db/write.ts';

const ROWS = 2000;

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`rankRebuild on statistics from before the rows [${dialect}]`, () => {
    let tdb: TestDb;
    let ws: string;
    before(async () => {
      tdb = await createTestDb(dialect);
      ws = (await createWorkspace(systemCtx(tdb.db.kysely), { name: 'rebuild' })).id;
      // Statistics of empty tables, as a fresh workspace's import finds them.
      await sql`analyze`.execute(tdb.db.kysely);
    });
    after(() => tdb.drop());

    test(`a scope of ${ROWS} rows is read a few times, not once per row`, async () => {
      await write(tdb.db.kysely, async (tx) => {
        await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
          select 'con_' || lpad(g::text, 8, '0'), ${ws}, 'contact', 'c' || g, '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
          from generate_series(1, ${ROWS}) as g`.execute(tx);
        const scans = async () =>
          Number(
            (
              await sql<{
                n: string;
              }>`select coalesce(idx_scan, 0) + coalesce(seq_scan, 0) as n from pg_stat_xact_user_tables where relname = 'records' and schemaname = current_schema()`.execute(
                tx,
              )
            ).rows[0]?.n ?? 0,
          );
        const before = await scans();
        await rankRebuild(tx, RECORDS, [ws, 'contact']);
        await settled(tx);
        const read = (await scans()) - before;
        assert.ok(read <= 10, `the rebuild read the records table ${read} times for ${ROWS} rows`);
        const page = await rankPage(tx, RECORDS, [ws, 'contact'], { offset: ROWS - 1, limit: 1 });
        assert.equal(page.total, ROWS);
        assert.deepEqual(
          page.rows.map((r) => r.id),
          ['con_00000001'],
        );
      });
    });
  });
}
