// The split of a leaf that creates took past its maximum, and of the entries above it that the
// split took past theirs, as statements that need no answer (docs/pages.md §Creates that only
// insert). Each one checks its entry itself and does nothing when it is within bounds, so the
// upkeep of a partition (src/db/rank/append.ts) sends the lock, the fold, every split and COMMIT in
// one write: the partition's exclusive lock is held for no round trip to this process, where
// splits awaited one at a time (`Partition.split`, partition.ts) would hold it over several turns of a
// busy event loop, with every create of the partition waiting behind it.
// Only the growth creates cause: no merge, no parts (sets that append have none).
import { CompiledQuery } from 'kysely';
import { LEVELS, type RankDef, rankSizes } from './def.ts';
import { Builder, cached, q, inPartition, type Stmt } from './sql.ts';

/**
 * CTEs `r` (each child with its position and piece) and `f` (each piece's first position and
 * weight), over CTE `c` (ts, id, w, rn, cnt), cut into pieces of about `target`.
 */
function pieces(target: number): string {
  return `r as (select ts, id, rn, w, (rn * ((cnt + ${target} - 1) / ${target})) / cnt as piece from c),
    f as (select piece, min(rn) as first, sum(w) as n from r group by piece)`;
}

/** The children of entry `up` (lo) below `hi`, or to the partition's end when `hi` is empty: two branches, each a closed range. */
function below(select: (range: string) => string, lo: string, up: string): string {
  const from = `(${lo}) >= (select lo_ts, lo_id from ${up})`;
  return `${select(`${from} and (${lo}) < (select lo_ts, lo_id from hi)`)} union all ${select(`${from} and not exists (select 1 from hi)`)}`;
}

/** Splits the leaf at (lo_ts, lo_id) if it holds more rows than a leaf may. */
function leafStatement(def: RankDef): Stmt {
  const { max, target } = rankSizes().leaf;
  return cached(def, `grow:0:${max}:${target}`, () => {
    const b = new Builder(true);
    const [S, LT, LI] = [b.p('scope'), b.p('lo_ts'), b.p('lo_id')];
    const [T, ts, id] = [q(def.table), `t.${q(def.ts)}`, `t.${q(def.id)}`];
    const where = inPartition(def, b);
    const rows = (range: string) => `select ${ts} as ts, ${id} as id from ${T} t where ${where} and exists (select 1 from e) and ${range}`;
    return b.done(`with e as (select lo_ts, lo_id from rank_buckets where scope = ${S} and level = 0 and lo_ts = ${LT} and lo_id = ${LI} and n > ${max}),
      hi as (select lo_ts, lo_id from rank_buckets where scope = ${S} and level = 0 and (lo_ts, lo_id) > (${LT}, ${LI}) order by lo_ts, lo_id limit 1),
      c as (select ts, id, 1 as w, row_number() over (order by ts, id) - 1 as rn, count(*) over () as cnt from (${below(rows, `${ts}, ${id}`, 'e')}) x),
      ${pieces(target)},
      ins as (insert into rank_buckets (scope, level, lo_ts, lo_id, n) select ${S}, 0, r.ts, r.id, f.n from f join r on r.rn = f.first where f.piece > 0 returning n)
      update rank_buckets set n = n - (select coalesce(sum(n), 0) from ins) where scope = ${S} and level = 0 and lo_ts = ${LT} and lo_id = ${LI}`);
  });
}

/** Splits the entry of `level` holding the leaf at (lo_ts, lo_id) if it covers more entries below than it may. */
function upperStatement(def: RankDef, level: number): Stmt {
  const { max, target } = rankSizes().fanout;
  return cached(def, `grow:${level}:${max}:${target}`, () => {
    const b = new Builder(true);
    const [S, LT, LI] = [b.p('scope'), b.p('lo_ts'), b.p('lo_id')];
    const kids = (range: string) => `select lo_ts as ts, lo_id as id, n as w from rank_buckets where scope = ${S} and level = ${level - 1} and ${range}`;
    return b.done(`with up as (select lo_ts, lo_id from rank_buckets where scope = ${S} and level = ${level} and (lo_ts, lo_id) <= (${LT}, ${LI})
        order by lo_ts desc, lo_id desc limit 1),
      hi as (select lo_ts, lo_id from rank_buckets where scope = ${S} and level = ${level} and (lo_ts, lo_id) > (select lo_ts, lo_id from up) order by lo_ts, lo_id limit 1),
      k as (select ts, id, w, row_number() over (order by ts, id) - 1 as rn, count(*) over () as cnt from (${below(kids, 'lo_ts, lo_id', 'up')}) x),
      c as (select * from k where cnt > ${max}),
      ${pieces(target)},
      ins as (insert into rank_buckets (scope, level, lo_ts, lo_id, n) select ${S}, ${level}, r.ts, r.id, f.n from f join r on r.rn = f.first where f.piece > 0 returning n)
      update rank_buckets set n = n - (select coalesce(sum(n), 0) from ins)
      where scope = ${S} and level = ${level} and (lo_ts, lo_id) = (select lo_ts, lo_id from up)`);
  });
}

/** The statements that split the leaf at `leaf` and the entries above it, in order, each a no-op within bounds. */
export function growStatements(def: RankDef, scope: string, values: readonly string[], leaf: { lo_ts: string; lo_id: string }): CompiledQuery[] {
  const args: Record<string, unknown> = { scope, lo_ts: leaf.lo_ts, lo_id: leaf.lo_id };
  def.by.forEach((_c, i) => (args[`by${i}`] = values[i]));
  Object.values(def.where ?? {}).forEach((v, i) => (args[`where${i}`] = v));
  const stmts = [leafStatement(def), ...Array.from({ length: LEVELS - 1 }, (_, i) => upperStatement(def, i + 1))];
  return stmts.map((s) =>
    CompiledQuery.raw(
      s.sql,
      s.args.map((a) => args[a]),
    ),
  );
}
