// Checks a partition of rank_buckets against its rows (docs/pages.md): every entry, with its pending
// count deltas, counts exactly the rows of its range, every boundary of a level is one of the level below, sizes within bounds, and
// every page equals the naive ORDER BY … LIMIT … OFFSET over the table.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { Executor } from '../../src/db/types.ts';
import { LEVELS, type RankDef, rankPage, rankSizes, rankUpkeepSettled, partitionKey, setRankSizes } from '../../src/db/rank/index.ts';

/**
 * Rank sizes for the tests of the suite it is called in, and the defaults again after them: small
 * ones make splits and merges happen. A test process runs several files one after another, so a
 * setting lasts no longer than the suites it is for (docs/architecture.md §Writing a test file).
 */
export function useRankSizes(sizes: Parameters<typeof setRankSizes>[0]): void {
  before(() => setRankSizes(sizes));
  after(() => setRankSizes());
}

function inPartition(def: RankDef, values: readonly string[]) {
  const parts = def.by.map((c, i) => sql`${sql.ref(`t.${c}`)} = ${values[i]}`);
  for (const [c, v] of Object.entries(def.where ?? {})) parts.push(sql`${sql.ref(`t.${c}`)} = ${v}`);
  return sql.join(parts, sql` and `);
}

export interface RankShape {
  /** Entries per level, lowest first. */
  entries: number[];
  total: number;
}

/** The kinds of bucket change a random sequence of writes should reach (the property tests' coverage). */
export interface BucketChanges {
  leafSplit: boolean;
  leafMerge: boolean;
  upperSplit: boolean;
  upperMerge: boolean;
}

/**
 * Marks in `seen` the bucket changes between two shapes of one partition (entries per level, lowest
 * first): more entries at a level that had some is a split, fewer after a removal a merge.
 */
export function noteBucketChanges(seen: BucketChanges, before: readonly number[], after: readonly number[], removal: boolean): void {
  const [leavesBefore = 0, upperBefore = 0] = before;
  const [leaves = 0, upper = 0] = after;
  if (leavesBefore > 0 && leaves > leavesBefore) seen.leafSplit = true;
  if (upperBefore > 0 && upper > upperBefore) seen.upperSplit = true;
  if (removal && leaves < leavesBefore) seen.leafMerge = true;
  if (removal && upper < upperBefore) seen.upperMerge = true;
}

/**
 * Runs `body` on random sequences of 1 to 20 `op`s, each in a partition of its own (`g0`, `g1`, …)
 * with a random page size, in rounds of `numRuns`, until every kind in `seen` has been marked or 5
 * rounds have passed: random sequences reach every kind of bucket change only most of the time (an
 * upper merge is the rarest, and one round missed it in CI now and then).
 */
export async function untilEverySeen<O>(
  seen: Record<string, boolean>,
  op: fc.Arbitrary<O>,
  numRuns: number,
  body: (grp: string, ops: O[], limit: number) => Promise<void>,
): Promise<void> {
  let run = 0;
  const property = fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 25 }), (ops, limit) =>
    body(`g${run++}`, ops, limit),
  );
  for (let round = 0; round < 5 && !Object.values(seen).every(Boolean); round++) await fc.assert(property, { numRuns });
}

/** Asserts the invariants of the partition's entries; returns their shape. */
export async function checkEntries(db: Executor, def: RankDef, values: readonly string[]): Promise<RankShape> {
  const scope = partitionKey(def, values);
  const [ts, id] = [sql.ref(`t.${def.ts}`), sql.ref(`t.${def.id}`)];
  const r = await sql<{ level: number; lo_ts: string; lo_id: string; n: number; rows: number; children: number; aligned: number }>`
    select e.level, e.lo_ts, e.lo_id, e.n,
      (select count(*) from ${sql.table(def.table)} t where ${inPartition(def, values)} and (${ts}, ${id}) >= (e.lo_ts, e.lo_id)
        and (e.hi_ts is null or (${ts}, ${id}) < (e.hi_ts, e.hi_id))) as rows,
      (select count(*) from rank_buckets c where c.scope = e.scope and c.level = e.level - 1 and (c.lo_ts, c.lo_id) >= (e.lo_ts, e.lo_id)
        and (e.hi_ts is null or (c.lo_ts, c.lo_id) < (e.hi_ts, e.hi_id))) as children,
      (select count(*) from rank_buckets c where c.scope = e.scope and c.level = e.level - 1 and c.lo_ts = e.lo_ts and c.lo_id = e.lo_id) as aligned
    from (select scope, level, lo_ts, lo_id, n + coalesce((select sum(x.d) from rank_deltas x where x.scope = b.scope and x.level = b.level
          and x.lo_ts = b.lo_ts and x.lo_id = b.lo_id), 0) as n,
        lead(lo_ts) over (partition by level order by lo_ts, lo_id) as hi_ts, lead(lo_id) over (partition by level order by lo_ts, lo_id) as hi_id
      from rank_buckets b where scope = ${scope}) e
    order by e.level, e.lo_ts, e.lo_id`.execute(db);
  const real = await sql<{ c: number }>`select count(*) as c from ${sql.table(def.table)} t where ${inPartition(def, values)}`.execute(db);
  const total = Number(real.rows[0]?.c);
  const orphans = await sql<{ c: number }>`select count(*) as c from rank_deltas x where x.scope = ${scope}
    and not exists (select 1 from rank_buckets b where b.scope = x.scope and b.level = x.level and b.lo_ts = x.lo_ts and b.lo_id = x.lo_id)`.execute(db);
  assert.equal(Number(orphans.rows[0]?.c), 0, `${scope}: every count delta belongs to an entry`);
  const { leaf, fanout } = rankSizes();
  const entries = Array.from({ length: LEVELS }, () => 0);
  for (let level = 0; level < LEVELS; level++) {
    const on = r.rows.filter((e) => Number(e.level) === level);
    entries[level] = on.length;
    if (total === 0 && on.length === 0) continue;
    const where = `${scope} level ${level}`;
    assert.equal(on[0]?.lo_ts, '', `${where}: the lowest entry is the base`);
    assert.equal(
      on.reduce((s, e) => s + Number(e.n), 0),
      total,
      `${where}: counts sum to the rows`,
    );
    for (const e of on) {
      const at = `${where} entry ${e.lo_ts}/${e.lo_id}`;
      assert.equal(Number(e.n), Number(e.rows), `${at}: n counts its rows`);
      const base = e.lo_ts === '';
      if (level === 0) {
        assert.ok(Number(e.n) <= leaf.max, `${at}: ${e.n} rows, over ${leaf.max}`);
        if (!base) assert.ok(Number(e.n) >= leaf.min, `${at}: ${e.n} rows, under ${leaf.min}`);
      } else {
        assert.equal(Number(e.aligned), 1, `${at}: a boundary of the level below`);
        assert.ok(Number(e.children) <= fanout.max, `${at}: ${e.children} entries below, over ${fanout.max}`);
        if (!base) assert.ok(Number(e.children) >= fanout.min, `${at}: ${e.children} entries below, under ${fanout.min}`);
      }
    }
  }
  return { entries, total };
}

/** The naive page: ORDER BY … LIMIT … OFFSET over the table. */
export async function naivePage(db: Executor, def: RankDef, values: readonly string[], offset: number, limit: number): Promise<string[]> {
  const [ts, id] = [sql.ref(`t.${def.ts}`), sql.ref(`t.${def.id}`)];
  const r = await sql<{ id: string }>`select ${id} as id from ${sql.table(def.table)} t where ${inPartition(def, values)}
    order by ${ts} desc, ${id} desc limit ${limit} offset ${offset}`.execute(db);
  return r.rows.map((x) => x.id);
}

/** Every row's id in the naive order: ORDER BY … over the table, every naive page a slice of it. */
async function naiveOrder(db: Executor, def: RankDef, values: readonly string[]): Promise<string[]> {
  const [ts, id] = [sql.ref(`t.${def.ts}`), sql.ref(`t.${def.id}`)];
  const r = await sql<{ id: string }>`select ${id} as id from ${sql.table(def.table)} t where ${inPartition(def, values)}
    order by ${ts} desc, ${id} desc`.execute(db);
  return r.rows.map((x) => x.id);
}

/**
 * Asserts that the pages at the given offsets (default: every one, and two past the end) equal the
 * naive pages. The rows hold still while it runs, so the naive order is read once and each naive
 * page is its slice, which is what LIMIT … OFFSET over that order returns.
 */
export async function checkPages(db: Executor, def: RankDef, values: readonly string[], opts: { limit?: number; offsets?: number[] } = {}): Promise<void> {
  const { total } = await rankPage(db, def, values, { offset: 0, limit: 1 });
  const naive = await naiveOrder(db, def, values);
  assert.equal(total, naive.length, 'total counts the rows');
  const limit = opts.limit ?? 3;
  const offsets = opts.offsets ?? [...Array.from({ length: total }, (_, i) => i), total, total + 5];
  for (const offset of offsets) {
    const page = await rankPage(db, def, values, { offset, limit });
    assert.equal(page.total, total, `offset ${offset}: total`);
    assert.deepEqual(
      page.rows.map((r) => r.id),
      naive.slice(offset, offset + limit),
      `offset ${offset} limit ${limit}`,
    );
  }
}

/**
 * Asserts the parts of a partition of a set with parts (docs/pages.md §Parts): every entry of every
 * level holds, per part, exactly the number of its rows in that part, and no part row is 0.
 * Counted here from the rows and entries, in JavaScript (keys are ASCII: bytewise order).
 */
export async function checkParts(db: Executor, def: RankDef, values: readonly string[]): Promise<void> {
  const part = def.part;
  assert.ok(part, `${def.name} has parts`);
  const scope = partitionKey(def, values);
  const rows = (
    await sql<{ ts: string; id: string; part: string }>`select ${sql.ref(`t.${def.ts}`)} as ts, ${sql.ref(`t.${def.id}`)} as id,
      case when ${sql.ref(`t.${part.when.column}`)} = ${part.when.value} then ${sql.ref(`t.${part.column}`)} else '' end as part
      from ${sql.table(def.table)} t where ${inPartition(def, values)}`.execute(db)
  ).rows;
  const entries = (await sql<{ level: number; lo_ts: string; lo_id: string }>`select level, lo_ts, lo_id from rank_buckets where scope = ${scope}`.execute(db))
    .rows;
  const kept = (
    await sql<{
      level: number;
      lo_ts: string;
      lo_id: string;
      part: string;
      n: number;
    }>`select level, lo_ts, lo_id, part, n from rank_parts where scope = ${scope}`.execute(db)
  ).rows;
  const cmp = (a: { ts: string; id: string }, b: { ts: string; id: string }) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const want = new Map<string, number>();
  for (let level = 0; level < LEVELS; level++) {
    const on = entries
      .filter((e) => Number(e.level) === level)
      .map((e) => ({ ts: e.lo_ts, id: e.lo_id }))
      .sort(cmp);
    for (const r of rows) {
      let at = 0;
      while (at + 1 < on.length && cmp(on[at + 1] as { ts: string; id: string }, r) <= 0) at++;
      const e = on[at] as { ts: string; id: string };
      const k = `${level}|${e.ts}|${e.id}|${r.part}`;
      want.set(k, (want.get(k) ?? 0) + 1);
    }
  }
  const got = new Map(kept.map((x) => [`${Number(x.level)}|${x.lo_ts}|${x.lo_id}|${x.part}`, Number(x.n)]));
  assert.deepEqual(new Map([...got].sort()), new Map([...want].sort()), `${scope}: the parts of every entry count its rows`);
}

/** After `total` creates through the API with tiny leaves: once their upkeep ran, the index is exact, its leaves split, every page naive. */
export async function checkCreated(db: Executor, def: RankDef, values: readonly string[], total: number): Promise<void> {
  await rankUpkeepSettled(); // splits and folds run after the answers
  const shape = await checkEntries(db, def, values);
  assert.equal(shape.total, total);
  assert.ok((shape.entries[0] ?? 0) > 4, `leaves: ${shape.entries.join(',')}`);
  await checkPages(db, def, values, { limit: 7 });
}

/** Rejects after `ms`: raced against a statement that must not wait for another transaction. */
export const timeout = (ms: number) => new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref());
