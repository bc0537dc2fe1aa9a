// The order-statistic index of src/db/rank/index.ts (docs/pages.md) against the naive ORDER BY … LIMIT …
// OFFSET, on both databases: random inserts and removals (identical timestamps, ties by id, bulk
// adds, rows of the table outside the ranked set) with tiny buckets so that leaves and the level
// above split and merge; after every step each entry counts exactly its rows, and at the end
// every page at every offset equals the naive one.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { defineRank, lockPartition, rankDelete, rankInsert, rankPage, rankRebuild } from '../../src/db/rank/index.ts';
import type { Tx } from '../../src/db/types.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { checkEntries, checkPages, naivePage, noteBucketChanges, untilEverySeen, useRankSizes } from '../helpers/rank.ts';
import { write } from '../../src/db/write.ts';

const SET = defineRank({ name: 'rank_test', table: 'rank_test', by: ['grp'], where: { kind: 'a' }, ts: 'ts', id: 'id' });

const ts = (t: number) => `2026-01-01T00:00:0${t}.000Z`;
const key = fc.record({ t: fc.integer({ min: 0, max: 4 }), i: fc.integer({ min: 0, max: 99 }), other: fc.integer({ min: 0, max: 9 }).map((x) => x === 0) });
const op = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('add' as const), keys: fc.array(key, { minLength: 1, maxLength: 30 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({ type: fc.constant('remove' as const), ids: fc.array(fc.integer({ min: 0, max: 99 }), { minLength: 1, maxLength: 25 }) }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('bulk' as const), n: fc.integer({ min: 24, max: 60 }), t: fc.integer({ min: 0, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('clear' as const), from: fc.integer({ min: 0, max: 99 }), span: fc.integer({ min: 5, max: 60 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('rebuild' as const) }) },
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

async function apply(tx: Tx, grp: string, o: Op, step: number): Promise<void> {
  await lockPartition(tx, SET, [grp]);
  if (o.type === 'rebuild') return rankRebuild(tx, SET, [grp]);
  if (o.type === 'remove' || o.type === 'clear') {
    // clear: a run of rows next to each other in the order, from somewhere in the scope.
    const ids =
      o.type === 'remove'
        ? o.ids.map((i) => `r${String(i).padStart(3, '0')}`)
        : (
            await sql<{ id: string }>`select id from rank_test where grp = ${grp} order by ts, id
          limit ${o.span} offset cast((select count(*) from rank_test where grp = ${grp}) * ${o.from} / 100 as integer)`.execute(tx)
          ).rows.map((r) => r.id);
    if (ids.length === 0) return;
    const gone = await sql<{
      ts: string;
      id: string;
      kind: string;
    }>`delete from rank_test where grp = ${grp} and id in (${sql.join(ids)}) returning ts, id, kind`.execute(tx);
    return rankDelete(
      tx,
      SET,
      [grp],
      gone.rows.filter((r) => r.kind === 'a'),
    );
  }
  const rows =
    o.type === 'bulk'
      ? Array.from({ length: o.n }, (_, j) => ({ ts: ts(o.t), id: `b${step}_${String(j).padStart(2, '0')}`, kind: 'a' }))
      : o.keys.map((k) => ({ ts: ts(k.t), id: `r${String(k.i).padStart(3, '0')}`, kind: k.other ? 'b' : 'a' }));
  const values = sql.join(rows.map((r) => sql`(${grp}, ${r.kind}, ${r.ts}, ${r.id})`));
  const added = await sql<{
    ts: string;
    id: string;
    kind: string;
  }>`insert into rank_test (grp, kind, ts, id) values ${values} on conflict (grp, id) do nothing returning ts, id, kind`.execute(tx);
  await rankInsert(
    tx,
    SET,
    [grp],
    added.rows.filter((r) => r.kind === 'a'),
  );
}

for (const dialect of testDialects()) {
  describe(`rank [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      await sql`create table rank_test (grp text not null, kind text not null, ts text not null, id text not null, primary key (grp, id))`.execute(
        tdb.db.kysely,
      );
      await sql`create index rank_test_order on rank_test (grp, kind, ts, id)`.execute(tdb.db.kysely);
    });
    after(() => tdb.drop());

    test('random inserts and removals: exact counts after every step, every page equals the naive one', async () => {
      const db = tdb.db.kysely;
      const seen = { leafSplit: false, leafMerge: false, upperSplit: false, upperMerge: false };
      await untilEverySeen(seen, op, 30, async (grp, ops, limit) => {
        let before = [0, 0];
        for (const [step, o] of ops.entries()) {
          await write(db, (tx) => apply(tx, grp, o, step));
          const shape = await checkEntries(db, SET, [grp]);
          noteBucketChanges(seen, before, shape.entries, o.type === 'remove' || o.type === 'clear');
          before = shape.entries;
        }
        await checkPages(db, SET, [grp], { limit });
        // Inside a transaction the page is read through it (SQLite: the write connection).
        await write(db, (tx) => checkPages(tx, SET, [grp], { limit: 25, offsets: [0, 7, 40] }));
      });
      assert.deepEqual(seen, { leafSplit: true, leafMerge: true, upperSplit: true, upperMerge: true });
    });

    test('identical timestamps: ties broken by id, newest id first, across many leaves', async () => {
      const db = tdb.db.kysely;
      const ids = Array.from({ length: 90 }, (_, i) => `t${String((i * 37) % 90).padStart(2, '0')}`);
      for (let i = 0; i < ids.length; i += 3) {
        await write(db, async (tx) => {
          const part = ids.slice(i, i + 3);
          await sql`insert into rank_test (grp, kind, ts, id) values ${sql.join(part.map((id) => sql`('ties', 'a', ${ts(1)}, ${id})`))}`.execute(tx);
          await rankInsert(
            tx,
            SET,
            ['ties'],
            part.map((id) => ({ ts: ts(1), id })),
          );
        });
      }
      const shape = await checkEntries(db, SET, ['ties']);
      assert.ok((shape.entries[0] ?? 0) > 10, `many leaves: ${shape.entries.join(',')}`);
      await checkPages(db, SET, ['ties'], { limit: 4 });
      const first = await rankPage(db, SET, ['ties'], { offset: 0, limit: 3 });
      assert.deepEqual(
        first.rows.map((r) => r.id),
        ['t89', 't88', 't87'],
      );
      assert.deepEqual(await naivePage(db, SET, ['ties'], 87, 25), ['t02', 't01', 't00']);
    });

    test('an empty or unknown scope: no rows, total 0, at any offset', async () => {
      for (const offset of [0, 1, 1000]) assert.deepEqual(await rankPage(tdb.db.kysely, SET, ['nobody'], { offset, limit: 25 }), { total: 0, rows: [] });
    });
  });
}
