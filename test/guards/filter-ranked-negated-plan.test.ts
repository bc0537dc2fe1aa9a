// A deep page of a negated ranked value (docs/filtering.md §Ranked values) reads a bounded number
// of rows: the listing without the value's set, found by counting, never a walk of the listing up
// to the offset. Without it, `$status[-equal]=TODO` deep in 1,000,000 tasks walked 750,000 of them
// (seconds on SQLite, past the statement timeout on PostgreSQL; docs/performance.md §Task pages).
// Counted, not timed, on 40,000 tasks (30,000 without the value), the page at the last offset:
// - PostgreSQL: the index entries and table rows the page's statements read, from the
//   transaction's own statistics: a few probes of at most a leaf each and one short walk, far
//   below the 30,000 rows the walk to the offset reads;
// - SQLite, which keeps no such counts: no statement reads the value index, and the steps of the
//   page (src/db/rank/except.ts) are few, each walk bounded to a short stretch of the listing (its limit).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { exceptSteps, oneByOne } from '../../src/db/rank/except.ts';
import { partitionKey } from '../../src/db/rank/index.ts';
import { type TypeDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { filterQuery } from '../../src/records/filter/service.ts';
import { FACETS } from '../../src/records/index/facets.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { seedRankedTasks, TASKS } from '../helpers/ranked-tasks.ts';
import { statementsOf, stepsOf } from '../helpers/sql-spy.ts';

for (const dialect of testDialects()) {
  describe(`a deep page of a negated ranked value [${dialect}]`, () => {
    let tdb: TestDb;
    let ws: string;
    let defs: TypeDefinitions;
    before(async () => {
      tdb = await createTestDb(dialect);
      ({ ws, defs } = await seedRankedTasks(tdb, 'negated ranked values'));
    });
    after(() => tdb.drop());

    const matches = (TASKS * 3) / 4;
    const page = { limit: 25, offset: matches - 25 };
    const query = { '$status[-equal]': 'TODO' };
    // The 25 oldest tasks not TODO, newest first: j = 33, 31, 30, 29, 27, …, 2, 1.
    const last = Array.from({ length: 36 }, (_, j) => j)
      .filter((j) => j % 4 !== 0)
      .reverse()
      .slice(-25)
      .map((j) => `tsk_${String(j).padStart(6, '0')}`);

    test('the last page of $status[-equal]=TODO is exact', async () => {
      const got = await filterQuery(operatorCtx(tdb.db.kysely, ws), { defs, query, page });
      assert.equal(got.totalCount, matches);
      assert.deepEqual(got.ids, last);
    });

    if (dialect === 'postgres')
      test('it waits for one round trip near the top and three deep in the listing', async () => {
        // Each step is a round trip the request waits for (test/helpers/sql-spy.ts). The first page
        // is one statement; the last is BEGIN with the sizes, the two probes around the guessed
        // offset, the walk with COMMIT (docs/pages.md §Differences of sets).
        const db = tdb.db.kysely;
        for (const [at, most] of [
          [{ limit: 25, offset: 0 }, 1],
          [{ limit: 25, offset: 100 }, 1],
          [{ limit: 25, offset: matches / 2 }, 3],
          [page, 3],
        ] as const) {
          const { result, steps } = await stepsOf(() => filterQuery(operatorCtx(db, ws), { defs, query, page: at }));
          assert.equal(result.totalCount, matches);
          assert.equal(result.ids.length, 25);
          assert.ok(
            steps.length <= most,
            `offset ${at.offset}: ${steps.length} steps\n${steps.map((x) => x.map((q) => q.slice(0, 120)).join(' | ')).join('\n')}`,
          );
        }
      });
    if (dialect === 'postgres')
      test('it reads a few leaves, not the 30,000 rows before the offset', async () => {
        const read = await write(tdb.db.kysely, async (tx) => {
          const counted = sql<{ n: number | string }>`select coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0) as n from pg_class c
            where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'i')`;
          const before = Number((await counted.execute(tx)).rows[0]?.n);
          const got = await filterQuery(operatorCtx(tx, ws), { defs, query, page });
          assert.equal(got.totalCount, matches);
          return Number((await counted.execute(tx)).rows[0]?.n) - before;
        });
        assert.ok(read > 0, 'the statistics count the page');
        assert.ok(read < 4000, `the page read ${read} index entries and rows for ${matches} matches`);
      });
    else
      test('its statements read no value index, and its steps and walks are few and short', async () => {
        const db = tdb.db.kysely;
        const { result, statements } = await statementsOf(() => filterQuery(operatorCtx(db, ws), { defs, query, page }));
        assert.equal(result.totalCount, matches);
        const read = new Set<string>();
        for (const s of statements) for (const m of s.matchAll(/\b(?:from|join)\s+"?([a-z_]+)"?/gi)) read.add(m[1]!);
        assert.deepEqual([...read].sort(), ['rank_buckets', 'record_facets', 'records'], statements.join('\n'));
        // The same steps driven here: each is a bounded read of the ranked sets, or a walk of `cap` rows.
        const outer = { def: RECORDS, values: [ws, 'task'] };
        const steps = oneByOne(
          exceptSteps(outer, [{ def: FACETS, values: [ws, 'task', '$status', 'todo'] }], page, false, (p) => partitionKey(p.def, p.values)),
        );
        let [count, walked] = [0, 0];
        for (let step = steps.next(); !step.done;) {
          const { stmt, args } = step.value;
          count++;
          // A walk's stretch is cut by a limit written into its text.
          if (stmt.sql.includes('not exists')) walked += Number(/limit (\d+)/.exec(stmt.sql)![1]);
          const params = stmt.args.map((a) => args[a]);
          step = steps.next((await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(stmt.sql, params))).rows);
        }
        assert.ok(count <= 20, `${count} statements`);
        assert.ok(walked > 0 && walked <= 512, `the walks cover ${walked} rows`);
      });
  });
}
