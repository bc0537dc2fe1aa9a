// Counting a ranked partition from its rows (docs/pages.md): after a bulk load (rankRebuild) and in
// migrations (rankRebuildAll), and the cutting of children into pieces that splits share.
import { type RawBuilder, sql } from 'kysely';
import { deferredOn } from '../pipeline.ts';
import type { Executor } from '../types.ts';
import { isPostgres } from '../dialect.ts';
import { LEVELS, type RankDef, rankSizes, partitionKey } from './def.ts';
import { buildParts, rowPart } from './parts.ts';

export const int = (v: number) => sql`cast(${v} as integer)`;
export const col = (alias: string, name: string) => sql.ref(`${alias}.${name}`);

/** The partition's rows of the table under alias `t` (all partitions when `values` is absent). */
export function partitionRows(def: RankDef, values?: readonly string[]): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = values ? def.by.map((c, i) => sql`${col('t', c)} = ${values[i]}`) : [];
  for (const [c, v] of Object.entries(def.where ?? {})) parts.push(sql`${col('t', c)} = ${v}`);
  return parts.length ? sql.join(parts, sql` and `) : sql`1 = 1`;
}

/** The partition key computed from a row, as partitionKey computes it from values. */
function partitionOfRow(def: RankDef): RawBuilder<unknown> {
  return sql.join([sql`${def.name}`, ...def.by.map((c) => sql`${col('t', c)}`)], sql` || ':' || `);
}

/** Counts every partition of the set again from its rows (migrations). */
export async function rankRebuildAll(db: Executor, def: RankDef): Promise<void> {
  const own = sql`substr(scope, 1, ${def.name.length + 1}) = ${`${def.name}:`}`;
  await sql`delete from rank_buckets where ${own}`.execute(db);
  if (def.part) await sql`delete from rank_parts where ${own}`.execute(db);
  // The migrations that ranked the first sets ran before count deltas existed.
  if (def.appends && (await hasDeltas(db))) await sql`delete from rank_deltas where ${own}`.execute(db);
  await build(db, def);
}

async function hasDeltas(db: Executor): Promise<boolean> {
  const r = isPostgres(db)
    ? await sql<{ c: number }>`select count(*) as c from pg_tables where tablename = 'rank_deltas' and schemaname = current_schema()`.execute(db)
    : await sql<{ c: number }>`select count(*) as c from sqlite_master where type = 'table' and name = 'rank_deltas'`.execute(db);
  return Number(r.rows[0]?.c) > 0;
}

/**
 * Counts the partition of `values` (every partition of the set without) from its rows, into empty entries.
 * Its statements but the parts' answer nothing: they go out with the next one awaited, so an
 * import's main thread goes on while the writer thread builds (docs/import.md §Speed).
 */
export async function build(db: Executor, def: RankDef, values?: readonly string[]): Promise<void> {
  const { leaf, fanout } = rankSizes();
  const own = values ? sql`scope = ${partitionKey(def, values)}` : sql`substr(scope, 1, ${def.name.length + 1}) = ${`${def.name}:`}`;
  const rows = (
    part: boolean,
  ) => sql`select ${partitionOfRow(def)} as scope, ${col('t', def.ts)} as ts, ${col('t', def.id)} as id${part ? sql`, ${rowPart(def)} as part` : sql``}, 1 as w
    from ${sql.table(def.table)} t where ${partitionRows(def, values)}`;
  if (values) await buildLeaves(db, def, values, leaf.target);
  else {
    await deferredOn(
      db,
      sql`${pieces(rows(false), leaf.target)}
        insert into rank_buckets (scope, level, lo_ts, lo_id, n)
        select r.scope, 0, case when f.piece = 0 then '' else r.ts end, case when f.piece = 0 then '' else r.id end, f.n from f join r on r.scope = f.scope and r.rn = f.first`,
    );
  }
  for (let level = 1; level < LEVELS; level++) {
    await deferredOn(
      db,
      sql`${pieces(sql`select scope, lo_ts as ts, lo_id as id, n as w from rank_buckets where level = ${int(level - 1)} and ${own}`, fanout.target)}
        insert into rank_buckets (scope, level, lo_ts, lo_id, n)
        select r.scope, ${int(level)}, r.ts, r.id, f.n from f join r on r.scope = f.scope and r.rn = f.first`,
    );
  }
  if (def.part) await buildParts(db, def, LEVELS, own, rows(true));
}

/**
 * The leaves of one partition, cut as `pieces` cuts them: row `rn` (from 0, in the order of ts and id)
 * of `cnt` lies in piece `rn * np / cnt` of `np`, so a piece's first row and its size follow from
 * the positions alone. Without a window partitioned by a partition computed per row, the rows are read
 * in the order of the set's index on (by..., ts, id) and never sorted (docs/performance.md §Bulk
 * import). The count `k` is materialized: computed once. Inlined, PostgreSQL planned it (on
 * statistics from before the rows were written) as the inner side of a nested loop without a
 * Materialize node, and counted the scope again for every row (docs/performance.md §Bulk import).
 */
async function buildLeaves(db: Executor, def: RankDef, values: readonly string[], target: number): Promise<void> {
  const from = sql`from ${sql.table(def.table)} t where ${partitionRows(def, values)}`;
  const [ts, id] = [col('t', def.ts), col('t', def.id)];
  await deferredOn(
    db,
    sql`with k as materialized (select count(*) as cnt ${from}),
      r as (select ${ts} as ts, ${id} as id, row_number() over (order by ${ts}, ${id}) - 1 as rn ${from}),
      p as (select ts, id, rn, cnt, (cnt + ${int(target)} - 1) / ${int(target)} as np from r, k)
    insert into rank_buckets (scope, level, lo_ts, lo_id, n)
    select ${partitionKey(def, values)}, 0, case when rn = 0 then '' else ts end, case when rn = 0 then '' else id end, ((rn * np / cnt + 1) * cnt + np - 1) / np - rn
    from p where rn = 0 or rn * np / cnt > (rn - 1) * np / cnt`,
  );
}

/**
 * CTEs `r` (each child with its position `rn` and piece) and `f` (each piece's first position and
 * weight): the children (partition, ts, id, w) cut, per partition, into pieces of about `target`.
 */
export function pieces(children: RawBuilder<unknown>, target: number): RawBuilder<unknown> {
  return sql`with c as (select scope, ts, id, w, row_number() over (partition by scope order by ts, id) - 1 as rn, count(*) over (partition by scope) as cnt from (${children}) x),
    r as (select scope, ts, id, rn, (rn * ((cnt + ${int(target)} - 1) / ${int(target)})) / cnt as piece, w from c),
    f as (select scope, piece, min(rn) as first, sum(w) as n from r group by scope, piece)`;
}
