// A deep page of a ranked value (docs/filtering.md §Ranked values) reads what the first page
// reads: the value's ranked set, never the value index's matches. Without it, `$status=TODO` deep
// in 1,000,000 tasks sorted a quarter of a million matches (seconds; docs/performance.md §Task
// pages). Counted, not timed, on 40,000 tasks (10,000 holding the value), the page at the last
// offset of the matches:
// - PostgreSQL: the index entries and table rows the page's statements read, from the
//   transaction's own statistics (pg_stat_xact_user_indexes, pg_stat_xact_user_tables): at most
//   one leaf and a few hundred entries, far below the 10,000 matches;
// - SQLite, which keeps no such counts: no statement reads the value index or sorts (EXPLAIN QUERY
//   PLAN of each statement the page ran: no record_values, no temporary B-tree).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type TypeDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { filterQuery } from '../../src/records/filter/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { sqlitePlan } from '../helpers/plans.ts';
import { seedRankedTasks, TASKS } from '../helpers/ranked-tasks.ts';
import { statementsOf } from '../helpers/sql-spy.ts';
import { write } from '../../src/db/write.ts';

for (const dialect of testDialects()) {
  describe(`a deep page of a ranked value [${dialect}]`, () => {
    let tdb: TestDb;
    let ws: string;
    let defs: TypeDefinitions;
    before(async () => {
      tdb = await createTestDb(dialect);
      ({ ws, defs } = await seedRankedTasks(tdb, 'ranked values'));
    });
    after(() => tdb.drop());

    const matches = TASKS / 4;
    const page = { limit: 25, offset: matches - 25 };

    test('the last page of $status=TODO is exact', async () => {
      const got = await filterQuery(operatorCtx(tdb.db.kysely, ws), { defs, query: { $status: 'TODO' }, page });
      assert.equal(got.totalCount, matches);
      // The oldest TODO tasks: j = 96, 92, …, 0.
      assert.deepEqual(
        got.ids,
        Array.from({ length: 25 }, (_, k) => `tsk_${String((24 - k) * 4).padStart(6, '0')}`),
      );
    });

    if (dialect === 'postgres')
      test('it reads at most a leaf and a few hundred entries, not the matches', async () => {
        const read = await write(tdb.db.kysely, async (tx) => {
          // Index entries read (an index's tuples returned) and rows read by sequential scans (a table's).
          const counted = sql<{ n: number | string }>`select coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0) as n from pg_class c
            where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'i')`;
          const before = Number((await counted.execute(tx)).rows[0]?.n);
          const got = await filterQuery(operatorCtx(tx, ws), { defs, query: { $status: 'TODO' }, page });
          assert.equal(got.totalCount, matches);
          return Number((await counted.execute(tx)).rows[0]?.n) - before;
        });
        assert.ok(read > 0, 'the statistics count the page');
        assert.ok(read < 2500, `the page read ${read} index entries and rows for ${matches} matches`);
      });
    else
      test('its statements read the ranked set alone: no value index, no sort of matches', async () => {
        const db = tdb.db.kysely;
        const { result, statements } = await statementsOf(() => filterQuery(operatorCtx(db, ws), { defs, query: { $status: 'TODO' }, page }));
        assert.equal(result.totalCount, matches);
        const read = new Set<string>();
        for (const s of statements) {
          if (/^\s*(begin|commit)\b/i.test(s)) continue;
          const tables = new Set([...s.matchAll(/\b(?:from|join)\s+"?([a-z_]+)"?/gi)].map((m) => m[1]!));
          for (const t of tables) read.add(t);
          // The only sort a ranked page makes is of one level's entries, never of rows.
          const plan = await sqlitePlan(db, s);
          if (plan.some((d) => /TEMP B-TREE/.test(d))) assert.deepEqual([...tables], ['rank_buckets'], `${s}\n${plan.join('\n')}`);
        }
        assert.deepEqual([...read].sort(), ['rank_buckets', 'record_facets'], statements.join('\n'));
      });
  });
}
