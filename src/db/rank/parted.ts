// The page of a set with parts (docs/pages.md §Parts) as a reader sees it: only the parts it may
// see are counted and read. The levels are descended as for any set, with each entry's count the
// sum of its rows in those parts (rank_parts); inside the leaf the row at the position is found
// through the table's partition index, skipping rows of other parts (at most one leaf is read); the
// page then gathers the rows at or below it from each visible part through that part's own
// index (at most `limit` from each), so rows of parts the reader does not see are never walked.
// - PostgreSQL: one statement, the parts given as SQL (so that they come from the same snapshot).
// - SQLite: statements with bound values in one read transaction, as in src/db/rank/sql.ts.
import { inPart, LEVELS, partOf, type RankDef } from './def.ts';
import { Builder, cached, descend, leafAnchor, pickEntry, q, inPartition, type Stmt } from './sql.ts';
import type { SqlitePageStep } from './sql.ts';

/** What a reader sees of a set with parts, and how its page's rows are read. */
export interface PartedRead {
  /** Names this reader's statements: the SQL below must be the same under one name. */
  name: string;
  /** A select of one text column `part`: the parts the reader sees ('' for the shared part). */
  parts(p: (arg: string) => string): string;
  /** The page's rows: a select over the relation `page` (the page's rows of the table, in no
   *  order) with the table's key as `rank_ts` and `rank_id` and whatever else the reader wants. */
  rows(p: (arg: string) => string, page: string): string;
  /** Values of the arguments used above (the names of src/db/rank/index.ts's own are taken). */
  args: Record<string, unknown>;
}

type Row = Record<string, unknown>;

function names(def: RankDef) {
  const part = def.part;
  if (!part) throw new Error(`rank ${def.name}: no parts`);
  return { T: q(def.table), ts: `t.${q(def.ts)}`, id: `t.${q(def.id)}`, partCol: `t.${q(part.column)}` };
}

export function partedPostgres(def: RankDef, read: PartedRead, limit: number): Stmt {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`rank: limit ${limit}`);
  return cached(def, `pg:parted:${read.name}:${limit}`, () => {
    const b = new Builder(true);
    const p = (a: string) => b.p(a);
    const { T, ts, id, partCol } = names(def);
    const [S, K] = [p('scope'), p('k')];
    const where = inPartition(def, b);
    const top = LEVELS - 1;
    const total = '(select total from tot)';
    const counts = (l: number, range = 'true') => `select r.lo_ts, r.lo_id, sum(r.n) as n from parts join rank_parts r
        on r.scope = ${S} and r.level = ${l} and r.part = parts.part and ${range} group by r.lo_ts, r.lo_id`;
    const ctes = [
      `parts(part) as (${read.parts(p)})`,
      `tot as (select coalesce(sum(r.n), 0) as total from parts join rank_parts r on r.scope = ${S} and r.level = ${top} and r.part = parts.part)`,
      pickEntry(`p${top}`, counts(top), `${total} - 1 - ${K}`, null, `${K} < ${total} and `),
    ];
    ctes.push(...descend(top, counts, 'r.lo_ts, r.lo_id'));
    // p0's upper neighbour among the entries of every part: the leaf's range in the table.
    ctes.push(`leaf as (select p0.lo_ts, p0.lo_id, p0.pos, h.lo_ts as hi_ts, h.lo_id as hi_id from p0 left join lateral
      (select lo_ts, lo_id from rank_buckets where scope = ${S} and level = 0 and (lo_ts, lo_id) > (p0.lo_ts, p0.lo_id) order by lo_ts, lo_id limit 1) h on true)`);
    ctes.push(...leafAnchor(T, where, ts, id, 'leaf', ` and ${partOf(def, 't')} in (select part from parts)`));
    const below = `(${ts}, ${id}) <= (select ts, id from anchor) order by ${ts} desc, ${id} desc limit ${limit}`;
    // Both MATERIALIZED: PostgreSQL inlines a CTE used once, and would then plan the page inside
    // the reader's join (the messages reader joins the workspace's channels) and run it again for
    // every channel; materialized, the page is read once (docs/performance.md §Plans that must
    // not depend on statistics).
    ctes.push(`page as materialized (select rank_ts, rank_id from (
        (select ${ts} as rank_ts, ${id} as rank_id from ${T} t where ${where} and ${inPart(def, 't', true)}
          and exists (select 1 from parts where part = '') and ${below})
        union all
        (select x.rank_ts, x.rank_id from parts cross join lateral
          (select ${ts} as rank_ts, ${id} as rank_id from ${T} t where ${where} and ${partCol} = parts.part and ${inPart(def, 't', false)} and ${below}) x
          where parts.part <> '')) u
      order by rank_ts desc, rank_id desc limit ${limit})`);
    // Each row of the page through the table's key: a lookup per row, whatever the plan.
    ctes.push(`paged as materialized (select t.* from page cross join lateral (select * from ${T} t where ${where} and ${id} = page.rank_id limit 1) t)`);
    ctes.push(`found as (${read.rows(p, 'paged')})`);
    return b.done(`with ${ctes.join(',\n')}
      select ${total} as rank_total, found.* from (select 1) o left join found on true order by found.rank_ts desc, found.rank_id desc`);
  });
}

function sqlite(def: RankDef, read: PartedRead, variant: string, make: (p: (a: string) => string, b: Builder) => string): Stmt {
  return cached(def, `lite:parted:${read.name}:${variant}`, () => {
    const b = new Builder(false);
    return b.done(make((a) => b.p(a), b));
  });
}

/** Bytewise, as SQLite compares text. */
const byKey = (a: Row, b: Row) =>
  Buffer.compare(Buffer.from(String(b.rank_ts)), Buffer.from(String(a.rank_ts))) ||
  Buffer.compare(Buffer.from(String(b.rank_id)), Buffer.from(String(a.rank_id)));

interface Picked {
  lo_ts: unknown;
  lo_id: unknown;
  hi_ts: unknown;
  hi_id: unknown;
  /** The entry's rows in the parts read, and the position inside them, from the oldest. */
  n: number;
  pos: number;
}

/** The entry of `rows` (lo_ts, lo_id, n; in order) holding position `pos`, its upper neighbour else `hi`. */
function pick(rows: Row[], pos: number, hi: Picked | undefined): Picked | undefined {
  let upto = 0;
  for (const [i, r] of rows.entries()) {
    const n = Number(r.n);
    const next = rows[i + 1];
    if (upto + n > pos)
      return {
        lo_ts: r.lo_ts,
        lo_id: r.lo_id,
        hi_ts: next ? next.lo_ts : (hi?.hi_ts ?? null),
        hi_id: next ? next.lo_id : (hi?.hi_id ?? null),
        n,
        pos: pos - upto,
      };
    upto += n;
  }
  return undefined;
}

/** The page as statements: each step yields one and receives its rows. */
export function* partedSqlite(def: RankDef, read: PartedRead, args: Record<string, unknown>): Generator<SqlitePageStep, { total: number; rows: Row[] }, Row[]> {
  const { T, ts, id, partCol } = names(def);
  const step = (variant: string, make: (p: (a: string) => string, b: Builder) => string, more: Record<string, unknown> = {}): SqlitePageStep => ({
    stmt: sqlite(def, read, variant, make),
    args: { ...read.args, ...args, ...more },
  });
  const parts = (yield step('parts', (p) => read.parts(p))).map((r) => String(r.part));
  const json = JSON.stringify(parts);
  const counts = (bounded: boolean, capped: boolean) => (p: (a: string) => string) =>
    `select lo_ts, lo_id, sum(n) as n from rank_parts where scope = ${p('scope')} and level = ${p('level')} and part in (select value from json_each(${p('parts')}))` +
    (bounded ? ` and (lo_ts, lo_id) >= (${p('lo_ts')}, ${p('lo_id')})` : '') +
    (capped ? ` and (lo_ts, lo_id) < (${p('hi_ts')}, ${p('hi_id')})` : '') +
    ' group by lo_ts, lo_id order by lo_ts, lo_id';
  const topRows = yield step('top', counts(false, false), { level: LEVELS - 1, parts: json });
  const total = topRows.reduce((s, r) => s + Number(r.n), 0);
  const k = Number(args.k);
  if (k >= total) return { total, rows: [] };
  let at = pick(topRows, total - 1 - k, undefined);
  for (let level = LEVELS - 2; level >= 0 && at; level--) {
    const capped = at.hi_ts !== null;
    const rows = yield step(`level:${capped}`, counts(true, capped), { level, parts: json, ...at });
    at = pick(rows, at.pos, at);
  }
  if (!at) throw new Error(`rank ${def.name}: the counts of ${String(args.scope)} are out of step with its rows`);
  const next = (yield step(
    'next',
    (p) => `select lo_ts, lo_id from rank_buckets where scope = ${p('scope')} and level = 0
      and (lo_ts, lo_id) > (${p('lo_ts')}, ${p('lo_id')}) order by lo_ts, lo_id limit 1`,
    { lo_ts: at.lo_ts, lo_id: at.lo_id },
  ))[0];
  // The anchor is the leaf's row at `pos` among the parts read, found by stepping over the rows
  // before it from the nearer end of the leaf: the first page of a set, the one most read, is at
  // its newest end (docs/pages.md §Parts: what a caller may see).
  const down = at.pos > (at.n - 1) / 2;
  const anchor = (yield step(
    `anchor:${next !== undefined}:${down}`,
    (p, b) =>
      `select ${ts} as ts, ${id} as id from ${T} t where ${inPartition(def, b)} and (${ts}, ${id}) >= (${p('lo_ts')}, ${p('lo_id')})` +
      (next ? ` and (${ts}, ${id}) < (${p('hi_ts')}, ${p('hi_id')})` : '') +
      ` and ${partOf(def, 't')} in (select value from json_each(${p('parts')})) order by ${ts}${down ? ' desc' : ''}, ${id}${down ? ' desc' : ''} limit 1 offset ${p('skip')}`,
    { lo_ts: at.lo_ts, lo_id: at.lo_id, hi_ts: next?.lo_ts, hi_id: next?.lo_id, parts: json, skip: down ? at.n - 1 - at.pos : at.pos },
  ))[0];
  if (!anchor) throw new Error(`rank ${def.name}: the counts of ${String(args.scope)} are out of step with its rows`);
  const below = (p: (a: string) => string) => `(${ts}, ${id}) <= (${p('a_ts')}, ${p('a_id')}) order by ${ts} desc, ${id} desc limit ${p('limit')}`;
  const found: Row[] = [];
  for (const part of parts) {
    const shared = part === '';
    const rows = yield step(
      `part:${shared}`,
      (p, b) =>
        `select ${ts} as rank_ts, ${id} as rank_id from ${T} t where ${inPartition(def, b)}${shared ? '' : ` and ${partCol} = ${p('part')}`} and ${inPart(def, 't', shared)} and ${below(p)}`,
      { part, a_ts: anchor.ts, a_id: anchor.id },
    );
    found.push(...rows);
  }
  const ids = found
    .sort(byKey)
    .slice(0, Number(args.limit))
    .map((r) => r.rank_id);
  // The page's rows of the table, each through the table's key. CROSS JOIN fixes the order (SQLite
  // never reorders it): left to the planner without statistics, the join walks the workspace's
  // whole index and probes the id list per row (docs/design.md §Database statistics).
  const page = (p: (a: string) => string, b: Builder) =>
    `(select t.* from json_each(${p('ids')}) j cross join ${T} t on ${inPartition(def, b)} and ${id} = j.value)`;
  const rows = yield step('rows', (p, b) => `select * from (${read.rows(p, page(p, b))}) f order by rank_ts desc, rank_id desc`, { ids: JSON.stringify(ids) });
  return { total, rows };
}
