// One change of a ranked set across many partitions at once (docs/pages.md §Keeping it exact,
// §Changes across partitions): a record that leaves or joins many lists moves one key in each of
// their member sets. The counts move as rankChange moves them, but with one statement per level for
// up to 400 keys of any partitions, each key with its partition and sign, instead of a base row and
// one update per level for every partition. A partition whose own batch is large enough to be
// counted again, a set with parts, and a partition taken for inserts go through rankChange,
// rankInsert and rankDelete as before.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { deferred, deferredRows } from '../pipeline.ts';
import { afterCommit } from '../write.ts';
import type { Database, Tx } from '../types.ts';
import { isPostgres } from '../dialect.ts';
import { heldMode, lockPartition } from './lock.ts';
import { noteLate } from './late.ts';
import { LEVELS, manyKeys, type RankDef, type RankKey, partitionKey } from './def.ts';
import { int } from './build.ts';
import { type Entry, outOfBounds } from './partition.ts';
import { rankChange, rankCheckLeaves, rankCheckLeavesIn } from './write.ts';
import { rankDelete, rankInsert } from './append.ts';

const CHUNK = 400;

export interface PartitionChange {
  values: readonly string[];
  added?: readonly RankKey[];
  removed?: readonly RankKey[];
}

interface Signed {
  scope: string;
  ts: string;
  id: string;
  d: 1 | -1;
}

type ScopedEntry = Entry & { scope: string };

/**
 * Rows of several partitions of `def` changed in this transaction, as rankChange takes them for one:
 * every partition is locked (in the order given) before its counts move, and every count moves
 * before any leaf is split or merged.
 */
export async function rankChangeAcross(tx: Tx, def: RankDef, changes: readonly PartitionChange[]): Promise<void> {
  const together: PartitionChange[] = [];
  for (const c of changes) {
    const [added, removed] = [c.added ?? [], c.removed ?? []];
    if (added.length + removed.length === 0 || noteLate(tx, def, c.values, c)) continue;
    const mode = heldMode(tx, partitionKey(def, c.values));
    if (mode === 'insert') {
      await rankDelete(tx, def, c.values, removed);
      await rankInsert(tx, def, c.values, added);
    } else if (def.part || added.length >= manyKeys()) await rankChange(tx, def, c.values, c);
    else together.push(c);
  }
  if (together.length === 0) return;
  const values = new Map(together.map((c) => [partitionKey(def, c.values), c.values]));
  for (const v of values.values()) await lockPartition(tx, def, v);
  const bases = [...values.keys()].flatMap((scope) => Array.from({ length: LEVELS }, (_, l) => sql`(${scope}, ${int(l)}, '', '', 0)`));
  await deferred(
    tx,
    sql`insert into rank_buckets (scope, level, lo_ts, lo_id, n) values ${sql.join(bases)} on conflict (scope, level, lo_ts, lo_id) do nothing`,
  );
  // Removed before added in each partition, as rankChange counts them; a key counts once per sign.
  const keys: Signed[] = together.flatMap((c) => {
    const scope = partitionKey(def, c.values);
    return [
      ...(c.removed ?? []).map((k) => ({ scope, ts: k.ts, id: k.id, d: -1 as const })),
      ...(c.added ?? []).map((k) => ({ scope, ts: k.ts, id: k.id, d: 1 as const })),
    ];
  });
  const later = isPostgres(tx) ? laterChecks(tx, def, values) : undefined;
  const touched = new Map<string, ScopedEntry>();
  for (let i = 0; i < keys.length; i += CHUNK) {
    const part = keys.slice(i, i + CHUNK);
    // Level 0 last: the levels above answer nothing the caller needs, so they go out with it.
    for (let level = LEVELS - 1; level > 0; level--) await deferred(tx, countUpdate(level, part));
    if (later) later.push(await deferredRows(tx, countUpdate(0, part)));
    else for (const e of (await countUpdate(0, part).execute(tx)).rows) touched.set(`${e.scope}\u0000${e.lo_ts}\u0000${e.lo_id}`, e);
  }
  if (later) return;
  for (const [scope, v] of values) {
    const out = [...touched.values()].filter((e) => e.scope === scope && outOfBounds(e));
    if (out.length > 0) await rankCheckLeavesIn(tx, def, v, out);
  }
}

/**
 * For each key, the entry holding it on `level` in its partition (the highest lo <= key, found with
 * one-column comparisons through the primary key, as rankChange finds it) moves by the key's sign;
 * returns the entries moved, with their partitions and new counts.
 */
function countUpdate(level: number, keys: readonly Signed[]): RawBuilder<ScopedEntry> {
  const l = int(level);
  const k = sql.join(keys.map((x) => sql`(cast(${x.scope} as text), cast(${x.ts} as text), cast(${x.id} as text), ${int(x.d)})`));
  return sql<ScopedEntry>`with k(scope, ts, id, d) as (values ${k}),
    m as (select k.scope, k.ts, k.d,
      (select b.lo_id from rank_buckets b where b.scope = k.scope and b.level = ${l} and b.lo_ts = k.ts and b.lo_id <= k.id order by b.lo_id desc limit 1) as same_id,
      (select b.lo_ts from rank_buckets b where b.scope = k.scope and b.level = ${l} and b.lo_ts < k.ts order by b.lo_ts desc limit 1) as prev_ts
      from k),
    e as (select scope, case when same_id is not null then ts else prev_ts end as lo_ts,
      coalesce(same_id, (select max(b.lo_id) from rank_buckets b where b.scope = m.scope and b.level = ${l} and b.lo_ts = m.prev_ts)) as lo_id, d from m),
    g as (select scope, lo_ts, lo_id, sum(d) as d from e group by scope, lo_ts, lo_id)
    update rank_buckets set n = n + (select g.d from g where g.scope = rank_buckets.scope and g.lo_ts = rank_buckets.lo_ts and g.lo_id = rank_buckets.lo_id)
    where (scope, level, lo_ts, lo_id) in (select scope, ${l}, lo_ts, lo_id from g)
    returning scope, lo_ts, lo_id, n`;
}

/**
 * In an API write on PostgreSQL (rankChange's laterCheck, for many partitions): the list that will
 * hold the leaves' new counts, read after COMMIT; each partition with a leaf out of bounds is then
 * checked in a transaction of its own under its lock. Elsewhere undefined.
 */
function laterChecks(tx: Tx, def: RankDef, values: ReadonlyMap<string, readonly string[]>): { readonly rows?: ScopedEntry[] }[] | undefined {
  const counts: { readonly rows?: ScopedEntry[] }[] = [];
  const registered = afterCommit(tx, async (db: Kysely<Database>) => {
    const touched = new Map<string, ScopedEntry>();
    for (const c of counts) for (const e of c.rows ?? []) touched.set(`${e.scope}\u0000${e.lo_ts}\u0000${e.lo_id}`, { ...e, n: Number(e.n) });
    for (const [scope, v] of values) {
      const out = [...touched.values()].filter((e) => e.scope === scope && outOfBounds(e));
      if (out.length > 0) await rankCheckLeaves(db, def, v, out);
    }
  });
  return registered ? counts : undefined;
}
