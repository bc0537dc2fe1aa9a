// Ranked sets with parts (docs/pages.md §Parts) against a full scan, on both databases: random
// inserts, removals, key changes, rows moving between parts one by one and whole parts moving at
// once (a channel becoming private or not), bulk adds and rebuilds, with tiny buckets so that
// leaves and the level above split and merge. After every step every entry counts exactly its rows
// and its rows per part; at the end, for readers of several part sets, every page at every offset
// and the total equal the naive ORDER BY … LIMIT … OFFSET over the rows of the parts they see.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { defineRank, lockPartition, type PartedRead, rankChange, type RankKey, rankMoveRows, rankPartedPage, rankRebuild } from '../../src/db/rank/index.ts';
import type { Executor, Tx } from '../../src/db/types.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { checkEntries, checkParts, noteBucketChanges, untilEverySeen, useRankSizes } from '../helpers/rank.ts';
import { write } from '../../src/db/write.ts';

// A row is in part `ch` when `vis` is 'p', else in the shared part.
const SET = defineRank({
  name: 'rank_part_test',
  table: 'rank_part_test',
  by: ['grp'],
  ts: 'ts',
  id: 'id',
  part: { column: 'ch', when: { column: 'vis', value: 'p' } },
});

const CHANNELS = ['a', 'b', 'c', 'd'];
const ts = (t: number) => `2026-01-01T00:00:0${t}.000Z`;
const row = fc.record({ t: fc.integer({ min: 0, max: 4 }), i: fc.integer({ min: 0, max: 99 }), ch: fc.constantFrom(...CHANNELS) });
const op = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('add' as const), rows: fc.array(row, { minLength: 1, maxLength: 30 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('remove' as const), ids: fc.array(fc.integer({ min: 0, max: 99 }), { minLength: 1, maxLength: 25 }) }),
  },
  // A run of rows next to each other in the order, from somewhere in the scope.
  { weight: 3, arbitrary: fc.record({ type: fc.constant('clear' as const), from: fc.integer({ min: 0, max: 99 }), span: fc.integer({ min: 5, max: 60 }) }) },
  // Rows change key, channel or both: each leaves its old key and part and takes the new ones.
  { weight: 3, arbitrary: fc.record({ type: fc.constant('change' as const), rows: fc.array(row, { minLength: 1, maxLength: 20 }) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('visibility' as const), ch: fc.constantFrom(...CHANNELS), private: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('bulk' as const), n: fc.integer({ min: 33, max: 60 }), ch: fc.constantFrom(...CHANNELS) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('rebuild' as const) }) },
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;
type Row = { ts: string; id: string; vis: string; ch: string };

const key = (r: Row): RankKey => ({ ts: r.ts, id: r.id, part: r.vis === 'p' ? r.ch : '' });

async function apply(tx: Tx, grp: string, o: Op, step: number): Promise<void> {
  await lockPartition(tx, SET, [grp]);
  const vis = async (ch: string) =>
    (await sql<{ vis: string }>`select vis from rank_part_channels where grp = ${grp} and ch = ${ch}`.execute(tx)).rows[0]?.vis ?? 's';
  if (o.type === 'rebuild') return rankRebuild(tx, SET, [grp]);
  if (o.type === 'visibility') {
    const was = await vis(o.ch);
    const now = o.private ? 'p' : 's';
    await sql`insert into rank_part_channels (grp, ch, vis) values (${grp}, ${o.ch}, ${now}) on conflict (grp, ch) do update set vis = ${now}`.execute(tx);
    await sql`update rank_part_test set vis = ${now} where grp = ${grp} and ch = ${o.ch}`.execute(tx);
    if (was !== now) {
      const rows = sql`select ts, id from rank_part_test where grp = ${grp} and ch = ${o.ch}`;
      await rankMoveRows(tx, SET, [grp], rows, was === 'p' ? o.ch : '', now === 'p' ? o.ch : '');
    }
    return;
  }
  if (o.type === 'remove' || o.type === 'clear') {
    const ids =
      o.type === 'remove'
        ? o.ids.map((i) => `r${String(i).padStart(3, '0')}`)
        : (
            await sql<{ id: string }>`select id from rank_part_test where grp = ${grp} order by ts, id
              limit ${o.span} offset cast((select count(*) from rank_part_test where grp = ${grp}) * ${o.from} / 100 as integer)`.execute(tx)
          ).rows.map((r) => r.id);
    if (ids.length === 0) return;
    const gone = await sql<Row>`delete from rank_part_test where grp = ${grp} and id in (${sql.join(ids)}) returning ts, id, vis, ch`.execute(tx);
    return rankChange(tx, SET, [grp], { removed: gone.rows.map(key) });
  }
  if (o.type === 'change') {
    const removed: RankKey[] = [];
    const added: RankKey[] = [];
    for (const r of new Map(o.rows.map((x) => [x.i, x])).values()) {
      const id = `r${String(r.i).padStart(3, '0')}`;
      const old = (await sql<Row>`select ts, id, vis, ch from rank_part_test where grp = ${grp} and id = ${id}`.execute(tx)).rows[0];
      if (!old) continue;
      const now = { ts: ts(r.t), id, ch: r.ch, vis: await vis(r.ch) };
      await sql`update rank_part_test set ts = ${now.ts}, ch = ${now.ch}, vis = ${now.vis} where grp = ${grp} and id = ${id}`.execute(tx);
      removed.push(key(old));
      added.push(key(now));
    }
    return rankChange(tx, SET, [grp], { removed, added });
  }
  const rows: Row[] = [];
  const picked =
    o.type === 'bulk'
      ? Array.from({ length: o.n }, (_, j) => ({ ts: ts(j % 5), id: `b${step}_${String(j).padStart(2, '0')}`, ch: o.ch }))
      : o.rows.map((r) => ({ ts: ts(r.t), id: `r${String(r.i).padStart(3, '0')}`, ch: r.ch }));
  for (const r of picked) rows.push({ ...r, vis: await vis(r.ch) });
  const values = sql.join(rows.map((r) => sql`(${grp}, ${r.ts}, ${r.id}, ${r.vis}, ${r.ch})`));
  const added =
    await sql<Row>`insert into rank_part_test (grp, ts, id, vis, ch) values ${values} on conflict (grp, id) do nothing returning ts, id, vis, ch`.execute(tx);
  await rankChange(tx, SET, [grp], { added: added.rows.map(key) });
}

/** A reader seeing the parts listed for it in rank_part_readers. */
const reader = (name: string): PartedRead => ({
  name: 'test',
  parts: (p) => `select part from rank_part_readers where reader = ${p('reader')}`,
  rows: (_p, page) => `select t.ts as rank_ts, t.id as rank_id, t.id, t.ch from ${page} t`,
  args: { reader: name },
});

const READERS: Record<string, string[]> = { shared: [''], one: ['', 'a'], three: ['', 'a', 'b', 'c'], only: ['b', 'd'], all: ['', ...CHANNELS] };

async function checkReaders(db: Executor, grp: string, limit: number, offsets?: number[]): Promise<void> {
  for (const [name, parts] of Object.entries(READERS)) {
    const sees = sql.join(parts);
    const all = (
      await sql<{ id: string }>`select id from rank_part_test where grp = ${grp} and (case when vis = 'p' then ch else '' end) in (${sees})
        order by ts desc, id desc`.execute(db)
    ).rows.map((r) => r.id);
    for (const offset of offsets ?? [...Array.from({ length: all.length + 1 }, (_, i) => i), all.length + 3]) {
      const page = await rankPartedPage<{ id: string }>(db, SET, [grp], { offset, limit }, reader(name));
      assert.equal(page.total, all.length, `${name}: total`);
      assert.deepEqual(
        page.rows.map((r) => r.id),
        all.slice(offset, offset + limit),
        `${name}: offset ${offset} limit ${limit}`,
      );
    }
  }
}

for (const dialect of testDialects()) {
  describe(`rank with parts [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      await sql`create table rank_part_test (grp text not null, ts text not null, id text not null, vis text not null, ch text not null, primary key (grp, id))`.execute(
        db,
      );
      await sql`create index rank_part_test_order on rank_part_test (grp, ts, id, vis, ch)`.execute(db);
      await sql`create index rank_part_test_shared on rank_part_test (grp, ts, id) where vis <> 'p'`.execute(db);
      await sql`create index rank_part_test_part on rank_part_test (grp, ch, ts, id) where vis = 'p'`.execute(db);
      await sql`create table rank_part_channels (grp text not null, ch text not null, vis text not null, primary key (grp, ch))`.execute(db);
      await sql`create table rank_part_readers (reader text not null, part text not null)`.execute(db);
      for (const [name, parts] of Object.entries(READERS))
        await sql`insert into rank_part_readers (reader, part) values ${sql.join(parts.map((p) => sql`(${name}, ${p})`))}`.execute(db);
    });
    after(() => tdb.drop());

    test('random writes: exact counts and parts after every step, every page of every reader equals the naive one', async () => {
      const db = tdb.db.kysely;
      const seen = { leafSplit: false, leafMerge: false, upperSplit: false, upperMerge: false, moved: false };
      await untilEverySeen(seen, op, 60, async (grp, ops, limit) => {
        let before = [0, 0];
        for (const [step, o] of ops.entries()) {
          await write(db, (tx) => apply(tx, grp, o, step));
          const shape = await checkEntries(db, SET, [grp]);
          await checkParts(db, SET, [grp]);
          noteBucketChanges(seen, before, shape.entries, o.type === 'remove' || o.type === 'clear');
          if (o.type === 'visibility') seen.moved = true;
          before = shape.entries;
        }
        await checkReaders(db, grp, limit);
        // Inside a transaction the page is read through it (SQLite: the write connection).
        await write(db, (tx) => checkReaders(tx, grp, 25, [0, 7, 40]));
      });
      assert.deepEqual(seen, { leafSplit: true, leafMerge: true, upperSplit: true, upperMerge: true, moved: true });
    });

    test('an empty or unknown scope, or a reader of no part with rows: total 0, no rows', async () => {
      for (const offset of [0, 1, 1000]) {
        assert.deepEqual(await rankPartedPage(tdb.db.kysely, SET, ['nobody'], { offset, limit: 25 }, reader('all')), { total: 0, rows: [] });
        assert.deepEqual(await rankPartedPage(tdb.db.kysely, SET, ['nobody'], { offset, limit: 25 }, reader('none')), { total: 0, rows: [] });
      }
    });
  });
}
