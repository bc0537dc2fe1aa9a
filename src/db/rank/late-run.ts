// A late transaction's run of keys (docs/pages.md §Long transactions): an atomic import appends its
// records to a listing with one timestamp, the import's, and ids drawn in increasing order, so the
// keys it adds to a partition form one block of the partition's order that nobody else's key falls
// into. Noted as a run (the first key, the last, their number, and the first key of each leaf's
// worth), they are counted into entries under the lock without reading their rows: the leaf
// holding the block is cut around it, the block's leaves are inserted as noted, and the levels
// above take its number. What that needs is checked under the lock: no entry boundary inside the
// block, and the leaf holding it counting exactly its rows below and above the block, so that no
// other row lies inside (else the partition is counted from its rows, as before).
import { sql } from 'kysely';
import type { LateRun, Tx } from '../types.ts';
import { col, int, partitionRows } from './build.ts';
import { LEVELS, type RankDef, type RankKey } from './def.ts';
import { Partition } from './partition.ts';

/** `run` extended by a transaction's change, or null when the keys no longer form one (any removed, another timestamp, an id not above the last). */
export function extendRun(run: LateRun | null, change: { added?: readonly RankKey[]; removed?: readonly RankKey[] }, target: number): LateRun | null {
  if ((change.removed?.length ?? 0) > 0) return null;
  const added = [...(change.added ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let out = run;
  for (const k of added) {
    if (!out) {
      out = { first: k, last: k, count: 1, cuts: [], target };
      continue;
    }
    if (k.ts !== out.first.ts || k.id <= out.last.id) return null;
    if (out.count % out.target === 0) out.cuts.push(k);
    out.count++;
    out.last = k;
  }
  return out;
}

const ROWS_PER_INSERT = 500;

/**
 * Counts `run`'s keys into the partition's entries, under its exclusive lock (deltas folded); false,
 * with nothing changed, when the partition does not allow it: the database does not order text by
 * code point (the run's order is JavaScript's), an entry begins inside the block, or another row
 * lies inside it.
 */
export async function appendRun(tx: Tx, def: RankDef, values: readonly string[], run: LateRun): Promise<boolean> {
  if (!(await codePointOrder(tx, def))) return false;
  const s = new Partition(tx, def, values);
  await s.ensureBase();
  const [first, last] = [run.first, run.last];
  const inside = await sql<{ c: number }>`select count(*) as c from rank_buckets where scope = ${s.scope} and level = 0
    and (lo_ts, lo_id) >= (${first.ts}, ${first.id}) and (lo_ts, lo_id) <= (${last.ts}, ${last.id})`.execute(tx);
  if (Number(inside.rows[0]?.c) > 0) return false;
  const at = { lo_ts: first.ts, lo_id: first.id };
  const leaf = (await s.containing(0, at))!;
  const next = await s.neighbour(0, at, sql`>`, sql`asc`);
  // The leaf's rows below the block: its range up to the block's first key (Partition.ranges reads
  // it from its start to its end, also at the block's timestamp).
  const below = await s.countOf(s.children(0, leaf, { ...at, n: 0 }));
  const [ts, id] = [col('t', def.ts), col('t', def.id)];
  const upper = next ? sql` and (${ts}, ${id}) < (${next.lo_ts}, ${next.lo_id})` : sql``;
  const above = await s.countOf(
    sql`select 1 from ${sql.table(def.table)} t where ${partitionRows(def, values)} and (${ts}, ${id}) > (${last.ts}, ${last.id})${upper}`,
  );
  if (below + above !== Number(leaf.n)) return false;
  // The block's leaves: the first from its first key, then one per cut; the last also takes the
  // rows above the block that the leaf holding it counted.
  const los = [first, ...run.cuts];
  const sizes = los.map((_, i) => (i < los.length - 1 ? run.target : run.count - run.target * (los.length - 1) + above));
  for (let i = 0; i < los.length; i += ROWS_PER_INSERT) {
    const values = los.slice(i, i + ROWS_PER_INSERT).map((k, j) => sql`(${s.scope}, 0, ${k.ts}, ${k.id}, ${int(sizes[i + j] as number)})`);
    await sql`insert into rank_buckets (scope, level, lo_ts, lo_id, n) values ${sql.join(values)}`.execute(tx);
  }
  await s.add(0, leaf, below - Number(leaf.n));
  for (let level = 1; level < LEVELS; level++) await s.add(level, (await s.containing(level, at))!, run.count);
  // Counts are final; the leaves around the block and the entries above it are put in shape.
  const lastLeaf = los[los.length - 1] as RankKey;
  await s.check(0, leaf);
  await s.check(0, { lo_ts: lastLeaf.ts, lo_id: lastLeaf.id });
  for (let level = 1; level < LEVELS; level++) await s.check(level, await s.containing(level, at));
  return true;
}

/** Whether PostgreSQL compares the set's keys, and the entries' bounds, by code point (a "C" collation). */
async function codePointOrder(tx: Tx, def: RankDef): Promise<boolean> {
  // 100 is the database's default collation; the provider is absent before PostgreSQL 15 (libc).
  const r = await sql<{ ok: boolean | null }>`select bool_and(case
      when a.attcollation = 100 then (d.datcollate in ('C', 'POSIX') or d.datcollate like 'C.%')
        and coalesce(to_jsonb(d) ->> 'datlocprovider', 'c') = 'c'
      else co.collname in ('C', 'POSIX') end) as ok
    from pg_attribute a
    join pg_database d on d.datname = current_database()
    left join pg_collation co on co.oid = a.attcollation
    where (a.attrelid = ${def.table}::regclass and a.attname in (${def.ts}, ${def.id}))
      or (a.attrelid = 'rank_buckets'::regclass and a.attname in ('lo_ts', 'lo_id'))`.execute(tx);
  return r.rows[0]?.ok === true;
}
