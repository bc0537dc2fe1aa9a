// The SQL of a page of src/db/rank/index.ts, generated once per ranked set. Positions are counted from
// the oldest row: the newest row of the page at offset k of n rows is at position n - 1 - k.
// - PostgreSQL: one statement (one snapshot). Each level keeps a running sum over the entries
//   under the entry picked above it, read between that entry's lo and its upper neighbour; the
//   leaf is then read through the table's index between its lo and its newest row. Every range is
//   bounded on both sides, so that even a generic plan (a named statement after five runs) that
//   sorts instead of streaming reads one entry's worth per level, never the whole partition.
// - SQLite compares a row value with a subquery's result on the first column only, so a bound
//   computed inside the statement would scan every row sharing the bound's timestamp. Its page
//   is a few statements with bound parameters instead, run in one read transaction.
import { hash } from 'node:crypto';
import { LEVELS, type RankDef } from './def.ts';

export interface Stmt {
  /** A statement name for PostgreSQL, derived from the text. */
  name: string;
  sql: string;
  /** The argument bound to each placeholder, in order. */
  args: string[];
}

/** Numbered placeholders ($n, ?n), one per argument name however often it appears. */
export class Builder {
  readonly args: string[] = [];
  readonly pg: boolean;
  constructor(pg: boolean) {
    this.pg = pg;
  }
  p(name: string): string {
    let i = this.args.indexOf(name);
    if (i < 0) i = this.args.push(name) - 1;
    return `${this.pg ? '$' : '?'}${i + 1}`;
  }
  done(text: string): Stmt {
    return { name: `rdx_rank_${hash('sha256', text, 'hex').slice(0, 24)}`, sql: text, args: this.args };
  }
}

export const q = (name: string) => `"${name}"`;

/** Conditions selecting the partition's rows of the table under alias `t`. */
export function inPartition(def: RankDef, b: Builder): string {
  const parts = def.by.map((c, i) => `t.${q(c)} = ${b.p(`by${i}`)}`);
  Object.keys(def.where ?? {}).forEach((c, i) => parts.push(`t.${q(c)} = ${b.p(`where${i}`)}`));
  return parts.join(' and ');
}

const cache = new Map<RankDef, Map<string, Stmt>>();

export function cached(def: RankDef, variant: string, make: () => Stmt): Stmt {
  let forDef = cache.get(def);
  if (!forDef) cache.set(def, (forDef = new Map<string, Stmt>()));
  let stmt = forDef.get(variant);
  if (!stmt) forDef.set(variant, (stmt = make()));
  return stmt;
}

const WINDOW = 'window w as (order by lo_ts, lo_id rows unbounded preceding)';

/**
 * Entries `pick` of `level`, in the range of the entry chosen one level up (CTE `up`, with lo and
 * hi): bounded above by up's upper neighbour, or, when up is the last entry of its level, by
 * nothing, as only up's own entries lie above it. The two cases are two branches of which one runs,
 * so that a generic plan too reads at most one entry's worth, whatever it estimates.
 */
export function within(pick: (range: string) => string, up: string, lo: string): string {
  const from = `(${lo}) >= (select lo_ts, lo_id from ${up})`;
  return `${pick(`${from} and (${lo}) < (select hi_ts, hi_id from ${up})`)}
        union all ${pick(`${from} and (select hi_ts from ${up}) is null`)}`;
}

/**
 * CTE `name`: the entry of `entries` (lo_ts, lo_id, n) whose range holds position `pos`, counted
 * from the oldest, with the position inside it and its upper neighbour (the next entry, else
 * `hiAbove`, the upper neighbour of the entry above, which is a boundary of every level below).
 */
export function pickEntry(name: string, entries: string, pos: string, hiAbove: string | null, guard = ''): string {
  const hi = (c: 'ts' | 'id') => (hiAbove ? `coalesce(lead(lo_${c}) over w, (select hi_${c} from ${hiAbove}))` : `lead(lo_${c}) over w`);
  return `${name} as (select lo_ts, lo_id, hi_ts, hi_id, ${pos} - (upto - n) as pos
        from (select lo_ts, lo_id, n, sum(n) over w as upto, ${hi('ts')} as hi_ts, ${hi('id')} as hi_id from (${entries}) x ${WINDOW}) c
        where ${guard}upto > ${pos} order by lo_ts, lo_id limit 1)`;
}

/**
 * CTEs `p{top-1}` down to `p0`: at each level the entry of `entries(level, range)` holding the
 * position left by the entry picked one level up, within that entry's range (`within`). `lo` names
 * the entries' lo_ts, lo_id columns as `entries` selects them.
 */
export function descend(top: number, entries: (level: number, range: string) => string, lo: string): string[] {
  const out: string[] = [];
  for (let l = top - 1; l >= 0; l--) {
    const up = `p${l + 1}`;
    out.push(
      pickEntry(
        `p${l}`,
        within((range) => entries(l, range), up, lo),
        `(select pos from ${up})`,
        up,
      ),
    );
  }
  return out;
}

/**
 * CTEs `last` (the newest row of the leaf `leaf`: the one below its upper neighbour, else the
 * newest of the partition) and `anchor` (the `visible` row at the leaf's position), read between the
 * leaf's lo and `last`: bounded on both sides in one index range, so no plan reads past the leaf.
 * Without a leaf (an empty partition, or an offset past its end) neither reads the table: a scan
 * visits every index entry it passes, those of rows no reader can see included, and another
 * transaction may hold any number of them (an import's, docs/import.md §Sharing the database).
 */
export function leafAnchor(T: string, where: string, ts: string, id: string, leaf = 'p0', visible = ''): string[] {
  const newest = (range: string) => `(select ${ts} as ts, ${id} as id from ${T} t where ${where} and ${range} order by ${ts} desc, ${id} desc limit 1)`;
  return [
    `last as (select ts, id from (${newest(`(${ts}, ${id}) < (select hi_ts, hi_id from ${leaf})`)} union all ${newest(`exists (select 1 from ${leaf}) and (select hi_ts from ${leaf}) is null`)}) l)`,
    `anchor as (select ${ts} as ts, ${id} as id from ${T} t where exists (select 1 from ${leaf}) and ${where}${visible} and (${ts}, ${id}) >= (select lo_ts, lo_id from ${leaf})
      and (${ts}, ${id}) <= (select ts, id from last) order by ${ts}, ${id} limit 1 offset (select pos from ${leaf}))`,
  ];
}

/**
 * `limit` is written into the statement: with it a parameter, the planner cannot cost the generic
 * plan of the named statement and plans every execution afresh (about a third of its time).
 *
 * `bounded`: the page's rows are read from the anchor down to a lower bound, the leaf's lo when
 * the page fits in the leaf, else the lo of the leaf below it. Without a lower bound, a plan made
 * without statistics may read every row below the anchor and sort them. Two leaves hold a page
 * unless the lower one is under its minimum (a merge not yet made): the caller then finds the page
 * short and reads it again unbounded (src/db/rank/index.ts).
 */
export function pagePostgres(def: RankDef, rows: boolean, limit: number, bounded = true): Stmt {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`rank: limit ${limit}`);
  return cached(def, `pg:${rows}:${limit}:${bounded}`, () => {
    const b = new Builder(true);
    const [S, K, T, ts, id] = [b.p('scope'), b.p('k'), q(def.table), `t.${q(def.ts)}`, `t.${q(def.id)}`];
    const where = inPartition(def, b);
    const top = LEVELS - 1;
    const total = '(select total from tot)';
    // A set whose creates append deltas (docs/pages.md §Creates that only insert): each entry is
    // counted with the partition's pending deltas, read once (a few rows at most) and joined by entry;
    // their columns are renamed so that the ranges' bare lo_ts, lo_id stay the entry's.
    const deltas = def.appends === true;
    const entries = (l: number, range = 'true') =>
      deltas
        ? `select lo_ts, lo_id, cast(n + coalesce(dl.d, 0) as integer) as n from rank_buckets left join dl on d_level = ${l} and d_ts = lo_ts and d_id = lo_id
        where scope = ${S} and level = ${l} and ${range}`
        : `select lo_ts, lo_id, n from rank_buckets where scope = ${S} and level = ${l} and ${range}`;
    const parts = [
      ...(deltas
        ? [
            `dl as materialized (select level as d_level, lo_ts as d_ts, lo_id as d_id, cast(sum(d) as integer) as d from rank_deltas where scope = ${S} group by level, lo_ts, lo_id)`,
            `tot as (select cast(coalesce(sum(n), 0) + coalesce((select sum(d) from dl where d_level = ${top}), 0) as bigint) as total from rank_buckets where scope = ${S} and level = ${top})`,
          ]
        : [`tot as (select coalesce(sum(n), 0) as total from rank_buckets where scope = ${S} and level = ${top})`]),
      pickEntry(`p${top}`, entries(top), `${total} - 1 - ${K}`, null, `${K} < ${total} and `),
    ];
    parts.push(...descend(top, entries, 'lo_ts, lo_id'));
    parts.push(...leafAnchor(T, where, ts, id));
    let floor = '';
    if (bounded) {
      parts.push(
        `prev as (select lo_ts, lo_id from rank_buckets where scope = ${S} and level = 0 and (lo_ts, lo_id) < (select lo_ts, lo_id from p0)
          order by lo_ts desc, lo_id desc limit 1)`,
      );
      // coalesce() stops at its first value: the leaf below is read only for a page that leaves its leaf.
      const bound = (c: 'ts' | 'id') => `coalesce((select lo_${c} from p0 where pos >= ${limit - 1}), (select lo_${c} from prev), (select lo_${c} from p0))`;
      floor = ` and (${ts}, ${id}) >= (${bound('ts')}, ${bound('id')})`;
    }
    parts.push(`page as (select ${ts} as rank_ts, ${id} as rank_id from ${T} t where ${where} and (${ts}, ${id}) <= (select ts, id from anchor)${floor}
      order by ${ts} desc, ${id} desc limit ${limit})`);
    const join = rows
      ? `, t.* from (select 1) o left join page on true left join lateral (select * from ${T} t where ${where} and ${id} = page.rank_id limit 1) t on true`
      : ' from (select 1) o left join page on true';
    return b.done(`with ${parts.join(',\n')}\nselect ${total} as rank_total, page.rank_ts, page.rank_id${join} order by page.rank_ts desc, page.rank_id desc`);
  });
}

export interface SqlitePageStep {
  stmt: Stmt;
  args: Record<string, unknown>;
}

function pickSqlite(def: RankDef, bounded: boolean, capped: boolean): Stmt {
  return cached(def, `lite:pick:${bounded}:${capped}`, () => {
    const b = new Builder(false);
    const range =
      (bounded ? ` and (lo_ts, lo_id) >= (${b.p('lo_ts')}, ${b.p('lo_id')})` : '') + (capped ? ` and (lo_ts, lo_id) < (${b.p('hi_ts')}, ${b.p('hi_id')})` : '');
    return b.done(`select lo_ts, lo_id, n, upto, hi_ts, hi_id from (
      select lo_ts, lo_id, n, sum(n) over w as upto, lead(lo_ts) over w as hi_ts, lead(lo_id) over w as hi_id
      from rank_buckets where scope = ${b.p('scope')} and level = ${b.p('level')}${range}
      window w as (order by lo_ts, lo_id rows unbounded preceding)) c
      where upto > ${b.p('pos')} order by lo_ts, lo_id limit 1`);
  });
}

function rowsSqlite(def: RankDef, capped: boolean, rows: boolean): Stmt {
  return cached(def, `lite:rows:${capped}:${rows}`, () => {
    const b = new Builder(false);
    const [T, ts, id] = [q(def.table), `t.${q(def.ts)}`, `t.${q(def.id)}`];
    const where = inPartition(def, b);
    const keys = `select ${ts} as rank_ts, ${id} as rank_id from ${T} t where ${where}${capped ? ` and (${ts}, ${id}) < (${b.p('hi_ts')}, ${b.p('hi_id')})` : ''}
      order by ${ts} desc, ${id} desc limit ${b.p('limit')} offset ${b.p('skip')}`;
    if (!rows) return b.done(keys);
    return b.done(`select p.rank_ts, p.rank_id, t.* from (${keys}) p join ${T} t on ${where} and ${id} = p.rank_id order by p.rank_ts desc, p.rank_id desc`);
  });
}

type Row = Record<string, unknown>;

/** The page as statements: each step yields one and receives its rows. */
export function* pageSqlite(def: RankDef, args: Record<string, unknown>, rows: boolean): Generator<SqlitePageStep, { total: number; rows: Row[] }, Row[]> {
  const totalStmt = cached(def, 'lite:total', () => {
    const b = new Builder(false);
    return b.done(`select coalesce(sum(n), 0) as total from rank_buckets where scope = ${b.p('scope')} and level = ${b.p('level')}`);
  });
  const total = Number((yield { stmt: totalStmt, args: { scope: args.scope, level: LEVELS - 1 } })[0]?.total ?? 0);
  const k = Number(args.k);
  if (k >= total) return { total, rows: [] };
  let pos = total - 1 - k;
  let at: { lo_ts: unknown; lo_id: unknown; hi_ts: unknown; hi_id: unknown; n: number } | undefined;
  for (let level = LEVELS - 1; level >= 0; level--) {
    const bounded = at !== undefined;
    const capped = at !== undefined && at.hi_ts !== null;
    const stmt = pickSqlite(def, bounded, capped);
    const r = (yield { stmt, args: { ...args, level, pos, ...(at ? { lo_ts: at.lo_ts, lo_id: at.lo_id, hi_ts: at.hi_ts, hi_id: at.hi_id } : {}) } })[0];
    if (!r) throw new Error(`rank ${def.name}: the counts of ${String(args.scope)} are out of step with its rows`);
    const n = Number(r.n);
    pos -= Number(r.upto) - n;
    at = { lo_ts: r.lo_ts, lo_id: r.lo_id, n, hi_ts: r.hi_ts ?? at?.hi_ts ?? null, hi_id: r.hi_ts === null ? (at?.hi_id ?? null) : r.hi_id };
  }
  const leaf = at as NonNullable<typeof at>;
  const capped = leaf.hi_ts !== null;
  const stmt = rowsSqlite(def, capped, rows);
  const found = yield { stmt, args: { ...args, skip: leaf.n - 1 - pos, ...(capped ? { hi_ts: leaf.hi_ts, hi_id: leaf.hi_id } : {}) } };
  return { total, rows: found };
}
