// The parts of a ranked set (docs/pages.md §Parts), kept in rank_parts next to rank_buckets: for
// every entry of a partition with parts, the number of its rows in each part, so that a reader who may
// see only some parts counts only those. Rows of rank_parts with n = 0 are removed, so an entry
// has a row per part it holds, and a reader reads only the rows of its own parts.
import { type RawBuilder, sql } from 'kysely';
import type { Executor, Tx } from '../types.ts';
import { partOf, type RankDef } from './def.ts';

export interface PartDelta {
  lo_ts: string;
  lo_id: string;
  part: string;
  d: number;
}

const int = (v: number) => sql`cast(${v} as integer)`;
const text = (v: string) => sql`cast(${v} as text)`;
const CHUNK = 300;

/** Moves the counts of (entry, part) by d; the rows that reach 0 are removed. */
export async function addParts(tx: Tx, scope: string, level: number, deltas: readonly PartDelta[]): Promise<void> {
  const moved = deltas.filter((x) => x.d !== 0);
  for (let i = 0; i < moved.length; i += CHUNK) {
    const part = moved.slice(i, i + CHUNK);
    const values = sql.join(part.map((x) => sql`(${text(x.lo_ts)}, ${text(x.lo_id)}, ${text(x.part)}, ${int(x.d)})`));
    // `where true` lets SQLite tell the upsert's ON from a join's.
    await sql`with v(lo_ts, lo_id, part, d) as (values ${values})
      insert into rank_parts (scope, level, lo_ts, lo_id, part, n) select ${scope}, ${int(level)}, lo_ts, lo_id, part, d from v where true
      on conflict (scope, level, lo_ts, lo_id, part) do update set n = rank_parts.n + excluded.n`.execute(tx);
    await sql`with v(lo_ts, lo_id, part) as (values ${sql.join(part.map((x) => sql`(${text(x.lo_ts)}, ${text(x.lo_id)}, ${text(x.part)})`))})
      delete from rank_parts where scope = ${scope} and level = ${int(level)} and n = 0 and (lo_ts, lo_id, part) in (select lo_ts, lo_id, part from v)`.execute(
      tx,
    );
  }
}

/** The entry `from` is gone from its level: `into` (the entry below it) takes over its parts. */
export async function mergeParts(tx: Tx, scope: string, level: number, from: { lo_ts: string; lo_id: string }, into: { lo_ts: string; lo_id: string }) {
  const own = sql`scope = ${scope} and level = ${int(level)} and lo_ts = ${from.lo_ts} and lo_id = ${from.lo_id}`;
  await sql`insert into rank_parts (scope, level, lo_ts, lo_id, part, n) select scope, level, ${text(into.lo_ts)}, ${text(into.lo_id)}, part, n
    from rank_parts where ${own} on conflict (scope, level, lo_ts, lo_id, part) do update set n = rank_parts.n + excluded.n`.execute(tx);
  await sql`delete from rank_parts where ${own}`.execute(tx);
}

/** Counts the parts of entry `e` again from `children` (partition, ts, id, part, w): its rows or the entries below. */
export async function recountParts(tx: Tx, scope: string, level: number, e: { lo_ts: string; lo_id: string }, children: RawBuilder<unknown>) {
  await sql`delete from rank_parts where scope = ${scope} and level = ${int(level)} and lo_ts = ${e.lo_ts} and lo_id = ${e.lo_id}`.execute(tx);
  await sql`insert into rank_parts (scope, level, lo_ts, lo_id, part, n)
    select ${scope}, ${int(level)}, ${text(e.lo_ts)}, ${text(e.lo_id)}, part, sum(w) from (${children}) x group by part`.execute(tx);
}

/**
 * The counts per (entry of `level`, part) of `children` (partition, ts, id, part, w), each child
 * counted by the entry whose range holds its key: the entries and the children sorted together,
 * each child takes the last entry before it. One pass, whatever the number of entries: the entry
 * is the first row of its run (`b`), taken by a window, not by joining the runs back to their
 * entries (PostgreSQL planned that join as a nested loop over two CTEs: quadratic, 370 s for
 * 50,000 messages).
 */
export function perEntry(level: number, own: RawBuilder<unknown>, children: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`with u as (
      select scope, lo_ts as ts, lo_id as id, 0 as kind, cast('' as text) as part, 0 as w from rank_buckets where level = ${int(level)} and ${own}
      union all select scope, ts, id, 1 as kind, part, w from (${children}) c),
    x as (select scope, ts, id, kind, part, w, sum(1 - kind) over (partition by scope order by ts, id, kind rows unbounded preceding) as b from u),
    y as (select scope, kind, part, w, b,
      first_value(ts) over (partition by scope, b order by ts, id, kind) as lo_ts,
      first_value(id) over (partition by scope, b order by ts, id, kind) as lo_id from x)
    select scope, lo_ts, lo_id, part, sum(w) as n from y where kind = 1 and b > 0 group by scope, lo_ts, lo_id, part`;
}

/** Builds the parts of every entry of the partitions `own` selects, once their entries are built. */
export async function buildParts(db: Executor, def: RankDef, levels: number, own: RawBuilder<unknown>, rows: RawBuilder<unknown>): Promise<void> {
  for (let level = 0; level < levels; level++) {
    const children = level === 0 ? rows : sql`select scope, lo_ts as ts, lo_id as id, part, n as w from rank_parts where level = ${int(level - 1)} and ${own}`;
    await sql`insert into rank_parts (scope, level, lo_ts, lo_id, part, n) select scope, ${int(level)}, lo_ts, lo_id, part, n from (${perEntry(level, own, children)}) p`.execute(
      db,
    );
  }
}

/** SQL of a row's part (under alias `t`) for the children of level 0. */
export function rowPart(def: RankDef): RawBuilder<unknown> {
  return sql.raw(partOf(def, 't'));
}
