// A filtered page whose statistics date from when the workspace was small (docs/filtering.md
// §Plans; docs/design.md §Database statistics): the driving filter's index range is read once and
// each of its records found by primary key, whatever the estimates. On PostgreSQL the statistics
// taken before a large import committed counted the workspace's records at about none, and the
// planner, estimating one row on either side, walked the type's whole listing and read the
// filter's whole index range again for each record: 20,000 contacts × 82 matches, 0.6–2 s a page,
// from the import's COMMIT until its ANALYZE (docs/import.md §Sharing the database). Counted, not
// timed: the rows each node of the plan handled (EXPLAIN ANALYZE, with the values and generic),
// and the index that reads the records; on SQLite the plan's steps.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import { refreshStatistics } from '../../src/db/statistics.ts';
import { loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { type Ctx, operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { valueRows } from '../../src/records/index/values.ts';
import { parseFilters, planFilters } from '../../src/records/filter/service.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { genericPlan, type PlanNode, scans, sqlitePlan, work } from '../helpers/plans.ts';

/** Tasks written before the statistics are taken (all matching), and after them (none matching). */
const BEFORE = 60;
const AFTER = 3000;
const T0 = Date.UTC(2026, 0, 1);

for (const dialect of testDialects()) {
  describe(`a filtered page on statistics taken before the workspace grew [${dialect}]`, () => {
    let tdb: TestDb;
    let ctx: Ctx;
    let defs: TypeDefinitions;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      const ws = (await createWorkspace(systemCtx(db), { name: 'stale statistics' })).id;
      ctx = operatorCtx(db, ws);
      defs = (await loadDefinitions(ctx, { objectType: 'task' }))!;
      const seed = async (from: number, to: number, title: (j: number) => string) => {
        for (let i = from; i < to; i += 500) {
          const records = [];
          const values = [];
          for (let j = i; j < Math.min(to, i + 500); j++) {
            const id = `tsk_${String(j).padStart(6, '0')}`;
            const at = new Date(T0 + j * 1000).toISOString();
            const v = { $title: title(j) };
            records.push({ id, workspace_id: ws, kind: 'task', external_id: null, fields: JSON.stringify(v), created_at: at, updated_at: at });
            values.push(...valueRows(ws, defs, id, v));
          }
          await db.insertInto('records').values(records).execute();
          await db.insertInto('record_values').values(values).execute();
        }
      };
      await seed(0, BEFORE, () => 'loop');
      // The statistics of the small workspace stay while it grows, as an import's rows count for
      // none until its end's ANALYZE (or autovacuum's, here turned off).
      if (dialect === 'postgres') {
        for (const t of ['records', 'record_values']) await sql`alter table ${sql.id(t)} set (autovacuum_enabled = off)`.execute(db);
        await sql`analyze records, record_values`.execute(db);
      } else await refreshStatistics(tdb.db);
      await seed(BEFORE, BEFORE + AFTER, (j) => `Task ${j}`);
    });
    after(() => tdb.drop());

    async function sorted(): Promise<RawBuilder<unknown>> {
      const plan = await planFilters(ctx, { defs, filters: parseFilters({ $title: 'loop' }, defs), page: { limit: 5, offset: 0 } });
      assert.equal(plan.kind, 'driven');
      return plan.kind === 'driven' ? plan.sorted : sql``;
    }

    if (dialect === 'postgres')
      test('the page handles about its matches, not matches × records', async () => {
        const c = (await sorted()).compile(tdb.db.kysely);
        const r = await tdb.db.kysely.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
          CompiledQuery.raw(`explain (analyze, format json) ${c.sql}`, [...c.parameters]),
        );
        const custom = r.rows[0]!['QUERY PLAN'][0]!.Plan;
        const generic = await genericPlan(tdb.db.kysely, c.sql, c.parameters);
        for (const [name, plan] of [
          ['with its values', custom],
          ['generic', generic],
        ] as const) {
          const n = work(plan);
          assert.ok(n <= 10 * BEFORE, `the plan ${name} handled ${n} rows for ${BEFORE} matches among ${BEFORE + AFTER} tasks`);
          for (const read of scans(plan))
            if (read['Relation Name'] === 'records') assert.equal(read['Index Name'], 'records_pkey', `the plan ${name} read records otherwise`);
        }
      });
    else
      test('the plan reads the value index, then each record by primary key', async () => {
        const c = (await sorted()).compile(tdb.db.kysely);
        const steps = await sqlitePlan(tdb.db.kysely, c.sql, c.parameters);
        const reads = steps.filter((s) => /^(SCAN|SEARCH) [vr] /.test(s));
        assert.match(reads[0] ?? '', /^SEARCH v USING COVERING INDEX record_values_text/, steps.join('\n'));
        assert.match(reads[1] ?? '', /^SEARCH r USING INDEX sqlite_autoindex_records_1 \(id=\?\)/, steps.join('\n'));
        assert.equal(reads.length, 2, steps.join('\n'));
      });
  });
}
