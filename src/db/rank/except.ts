// Pages of a ranked set minus some of its subsets (docs/pages.md §Differences of sets): the rows of
// an outer partition that are in none of a few inner partitions, whose rows are rows of the outer
// one under the same key (a task listing without the tasks of one status). Nothing is kept for the
// difference: its size is the outer size minus the inner sizes (the inner sets are disjoint), and
// its row at offset k is found by counting. For an outer offset o, h(o) = o − (inner rows newer
// than the outer row at o) is the number of difference rows newer than that row; h never
// decreases, so the offset of the k-th row lies between an o with h(o) ≤ k and one with h(o) > k.
// The search narrows that bracket by probes (a seek in the outer set, a count in each inner set,
// both bounded like a page), guessing where the row lies from the density of the bracket, until it
// is short; then one bounded walk of the outer rows from the bracket's start, each probed against
// the inner sets by key, gives the page. A walk that runs out before the page is full (a run of
// inner rows longer than expected) searches again for the rest.
import { LEVELS, type RankDef } from './def.ts';
import { Builder, cached, inPartition, pagePostgres, pageSqlite, q, type SqlitePageStep, type Stmt } from './sql.ts';

/** One partition of a ranked set. */
export interface RankPartition {
  def: RankDef;
  values: readonly string[];
}

type Row = Record<string, unknown>;
type Steps = Generator<SqlitePageStep, { total: number; rows: Row[] }, Row[]>;
interface Key {
  ts: unknown;
  id: unknown;
}

/**
 * A bracket at most `within` outer rows wide is walked rather than searched further; a walk's length
 * is rounded up to a multiple of `unit`. Tests make both tiny, so that walks run out.
 */
export const EXCEPT_WALK = { within: 512, unit: 128 };
/** Probes of one search; a search halves its bracket at least every third probe, so 2⁵³ rows need fewer. */
const MAX_PROBES = 120;

function partitionArgs(p: RankPartition, prefix: string, scope: string): Record<string, unknown> {
  const args: Record<string, unknown> = { [`${prefix}scope`]: scope };
  p.def.by.forEach((_c, i) => (args[`${prefix}by${i}`] = p.values[i]));
  Object.values(p.def.where ?? {}).forEach((v, i) => (args[`${prefix}where${i}`] = v));
  return args;
}

/** Entries' counts on `level` in a range, deltas added where the set keeps them (PostgreSQL). */
function levelSum(def: RankDef, pg: boolean, S: string, level: number, range: string): string {
  const n = `(select coalesce(sum(n), 0) from rank_buckets where scope = ${S} and level = ${level} and ${range})`;
  if (!pg || def.appends !== true) return n;
  return `${n} + (select coalesce(sum(d), 0) from rank_deltas where scope = ${S} and level = ${level} and ${range})`;
}

/** The partitions' sizes, one column each (`n0`, `n1`, …), in one statement. */
function totalsStmt(defs: readonly RankDef[], pg: boolean): Stmt {
  const b = new Builder(pg);
  const cols = defs.map((d, i) => `cast(${levelSum(d, pg, b.p(`s${i}`), LEVELS - 1, 'true')} as bigint) as n${i}`);
  return b.done(`select ${cols.join(', ')}`);
}

// The rows of a partition at or older than a key X. On each level, the entry holding X is the one
// with the greatest lo at or below it; the entries of a level older than its entry and newer than
// the entry of the level above count whole, and the leaf's own rows up to X are counted through the
// table's index (at most one leaf).

/** Conditions selecting the partition's rows of the table under alias `t`, its values named with `prefix`. */
function inPartitionAs(def: RankDef, b: Builder, prefix: string): string {
  const parts = def.by.map((c, i) => `t.${q(c)} = ${b.p(`${prefix}by${i}`)}`);
  Object.keys(def.where ?? {}).forEach((c, i) => parts.push(`t.${q(c)} = ${b.p(`${prefix}where${i}`)}`));
  return parts.join(' and ');
}

/** PostgreSQL: the CTEs finding the entries holding X, and the count as an expression; bounds computed inside. */
function heldPostgres(def: RankDef, b: Builder, prefix: string, X: string): { ctes: string[]; n: string } {
  const S = b.p(`${prefix}scope`);
  const levels = Array.from({ length: LEVELS }, (_, l) => l);
  const e = (l: number) => `(select lo_ts, lo_id from ${prefix}e${l})`;
  const ctes = levels.map(
    (l) =>
      `${prefix}e${l} as (select lo_ts, lo_id from rank_buckets where scope = ${S} and level = ${l} and (lo_ts, lo_id) <= ${X} order by lo_ts desc, lo_id desc limit 1)`,
  );
  const sums = levels.map((l) => levelSum(def, true, S, l, `(lo_ts, lo_id) < ${e(l)}${l < LEVELS - 1 ? ` and (lo_ts, lo_id) >= ${e(l + 1)}` : ''}`));
  const [T, ts, id] = [q(def.table), `t.${q(def.ts)}`, `t.${q(def.id)}`];
  const rows = `(select count(*) from ${T} t where ${inPartitionAs(def, b, prefix)} and (${ts}, ${id}) >= ${e(0)} and (${ts}, ${id}) <= ${X})`;
  return { ctes, n: `cast(${[...sums, rows].join(' + ')} as bigint)` };
}

/**
 * PostgreSQL: a probe as one statement (one round trip): the outer row at offset `k` (the one-row
 * page of src/db/rank/sql.ts, its placeholders kept) and, for each inner partition `i`, its rows at
 * or older than that row's key (`n{i}`).
 */
function probePostgres(outer: RankDef, inner: readonly RankDef[]): Stmt {
  return cached(outer, `except:probe:${inner.map((d) => d.name).join(',')}`, () => {
    const seekStmt = pagePostgres(outer, false, 1);
    const b = new Builder(true);
    for (const a of seekStmt.args) b.p(a);
    const X = '(select x_ts, x_id from x)';
    const held = inner.map((d, i) => heldPostgres(d, b, `i${i}`, X));
    const ctes = [
      `seek as (${seekStmt.sql})`,
      'x as (select rank_ts as x_ts, rank_id as x_id from seek where rank_id is not null)',
      ...held.flatMap((h) => h.ctes),
    ];
    return b.done(`with ${ctes.join(',\n')}\nselect ${['x_ts', 'x_id', ...held.map((h, i) => `${h.n} as n${i}`)].join(', ')} from x`);
  });
}

/** SQLite uses a bound computed inside a statement for its first column only (src/db/rank/sql.ts): the entries holding X first. */
function entriesSqlite(def: RankDef): Stmt {
  return cached(def, 'except:entries:lite', () => {
    const b = new Builder(false);
    const [S, X] = [b.p('scope'), `(${b.p('x_ts')}, ${b.p('x_id')})`];
    return b.done(
      Array.from(
        { length: LEVELS },
        (_, l) =>
          `select * from (select ${l} as level, lo_ts, lo_id from rank_buckets where scope = ${S} and level = ${l} and (lo_ts, lo_id) <= ${X} order by lo_ts desc, lo_id desc limit 1)`,
      ).join(' union all '),
    );
  });
}

/** SQLite's count once the entries holding the key are known (`lo{l}_ts`, `lo{l}_id`). */
function holdersCountSqlite(def: RankDef): Stmt {
  return cached(def, 'except:count:lite', () => {
    const b = new Builder(false);
    const S = b.p('scope');
    const lo = (l: number) => `(${b.p(`lo${l}_ts`)}, ${b.p(`lo${l}_id`)})`;
    const sums = Array.from({ length: LEVELS }, (_, l) =>
      levelSum(def, false, S, l, `(lo_ts, lo_id) < ${lo(l)}${l < LEVELS - 1 ? ` and (lo_ts, lo_id) >= ${lo(l + 1)}` : ''}`),
    );
    const [T, ts, id] = [q(def.table), `t.${q(def.ts)}`, `t.${q(def.id)}`];
    const rows = `(select count(*) from ${T} t where ${inPartition(def, b)} and (${ts}, ${id}) >= ${lo(0)} and (${ts}, ${id}) <= (${b.p('x_ts')}, ${b.p('x_id')}))`;
    return b.done(`select ${[...sums, rows].join(' + ')} as n`);
  });
}

/**
 * The outer rows from the key (x_ts, x_id) down, at most `cap` of them, that no inner partition
 * holds, after skipping `skip` such rows: each outer row is looked up in each inner set by its key.
 * On PostgreSQL a named statement gets a generic plan, planned without its values: `cap` is written
 * into the text (rounded up, so that few texts exist) so that the stretch is always an index
 * range read newest first and cut there, and each lookup ends with `offset 0` so that it stays a
 * lookup per row rather than becoming a join over the inner set (docs/filtering.md §Plans).
 */
function walkStmt(outer: RankDef, inner: readonly RankDef[], pg: boolean, cap: number): Stmt {
  return cached(outer, `except:walk:${pg}:${cap}:${inner.map((d) => d.name).join(',')}`, () => {
    const b = new Builder(pg);
    const [T, ts, id] = [q(outer.table), `t.${q(outer.ts)}`, `t.${q(outer.id)}`];
    const absent = inner.map((d, i) => {
      const by = d.by.map((c, j) => `s.${q(c)} = ${b.p(`i${i}by${j}`)}`);
      Object.keys(d.where ?? {}).forEach((c, j) => by.push(`s.${q(c)} = ${b.p(`i${i}where${j}`)}`));
      return `not exists (select 1 from ${q(d.table)} s where ${by.join(' and ')} and s.${q(d.ts)} = w.rank_ts and s.${q(d.id)} = w.rank_id${pg ? ' offset 0' : ''})`;
    });
    const stretch = `select ${ts} as rank_ts, ${id} as rank_id from ${T} t where ${inPartition(outer, b)} and (${ts}, ${id}) <= (${b.p('x_ts')}, ${b.p('x_id')})
      order by ${ts} desc, ${id} desc limit ${cap}`;
    return b.done(`select w.rank_ts, w.rank_id from (${stretch}) w where ${absent.join(' and ')}
      order by w.rank_ts desc, w.rank_id desc limit ${b.p('limit')} offset ${b.p('skip')}`);
  });
}

/** SQLite: the outer row at `offset`, newest first (one row of a ranked page). */
function* seekSqlite(outer: RankPartition, scope: string, offset: number): Generator<SqlitePageStep, Key, Row[]> {
  const found = (yield* pageSqlite(outer.def, { ...partitionArgs(outer, '', scope), k: offset, limit: 1 }, false)).rows;
  const r = found[0];
  if (!r) throw new Error(`rank ${outer.def.name}: no row at ${offset} of ${scope}`);
  return { ts: r.rank_ts, id: r.rank_id };
}

/** SQLite: the rows of one inner partition at or older than `key`. */
function* heldSqlite(p: RankPartition, scope: string, key: Key): Generator<SqlitePageStep, number, Row[]> {
  const args = { ...partitionArgs(p, '', scope), x_ts: key.ts, x_id: key.id };
  const entries = yield { stmt: entriesSqlite(p.def), args };
  if (entries.length < LEVELS) return 0;
  const bounds: Record<string, unknown> = {};
  for (const e of entries) Object.assign(bounds, { [`lo${String(e.level)}_ts`]: e.lo_ts, [`lo${String(e.level)}_id`]: e.lo_id });
  return Number((yield { stmt: holdersCountSqlite(p.def), args: { ...args, ...bounds } })[0]?.n ?? 0);
}

/** The outer row at offset `o` and the rows of each inner partition newer than it. */
function* probe(
  outer: RankPartition,
  inner: readonly RankPartition[],
  scopes: readonly string[],
  held: readonly number[],
  pg: boolean,
  o: number,
): Generator<SqlitePageStep, { key: Key; newer: number }, Row[]> {
  if (!pg) {
    const key = yield* seekSqlite(outer, scopes[0]!, o);
    let newer = 0;
    for (let i = 0; i < inner.length; i++) newer += held[i]! - (yield* heldSqlite(inner[i]!, scopes[i + 1]!, key));
    return { key, newer };
  }
  const args: Record<string, unknown> = { ...partitionArgs(outer, '', scopes[0]!), k: o, limit: 1 };
  inner.forEach((p, i) => Object.assign(args, partitionArgs(p, `i${i}`, scopes[i + 1]!)));
  const stmt = probePostgres(
    outer.def,
    inner.map((p) => p.def),
  );
  const r = (yield { stmt, args })[0];
  if (!r) throw new Error(`rank ${outer.def.name}: no row at ${o} of ${scopes[0]!}`);
  return { key: { ts: r.x_ts, id: r.x_id }, newer: held.reduce((sum, h, i) => sum + h - Number(r[`n${i}`]), 0) };
}

/**
 * The page at `page.offset` of the outer partition without the inner ones, newest first, and the
 * difference's size, as steps run in one snapshot (src/db/rank/index.ts). The inner partitions are
 * disjoint and every row of each is an outer row with the same key.
 */
export function* exceptSteps(
  outer: RankPartition,
  inner: readonly RankPartition[],
  page: { offset: number; limit: number },
  pg: boolean,
  scopeOf: (p: RankPartition) => string,
): Steps {
  const scopes = [outer, ...inner].map(scopeOf);
  const sizes =
    (yield {
      stmt: totalsStmt(
        [outer, ...inner].map((p) => p.def),
        pg,
      ),
      args: Object.fromEntries(scopes.map((s, i) => [`s${i}`, s])),
    })[0] ?? {};
  const [all, ...held] = scopes.map((_s, i) => Number(sizes[`n${i}`] ?? 0));
  const innerRows = held.reduce((x, y) => x + y, 0);
  const total = all! - innerRows;
  const want = Math.max(0, Math.min(page.limit, total - page.offset));
  const rows: Row[] = [];
  // Bracket [a, b) of outer offsets with h(a) = ha ≤ k < hb = h(b); h(0) = 0, h(all) = total.
  let [a, ha, keyA] = [0, 0, null as Key | null];
  let [b, hb] = [all!, total];
  let k = page.offset;
  while (rows.length < want) {
    if (hb <= k) [b, hb] = [all!, total];
    let lastWidth = b - a;
    let slow = 0;
    for (let probes = 0; b - a > EXCEPT_WALK.within && probes < MAX_PROBES; probes++) {
      // Interpolated from the bracket's density, then placed a margin past the guess on the far
      // side, so that the probe usually becomes that end and leaves a bracket of about the margin.
      const guess = a + ((k - ha + 0.5) * (b - a)) / (hb - ha);
      const margin = EXCEPT_WALK.within / 4;
      let o = guess - a > b - guess ? guess - margin : guess + margin;
      if (slow >= 2) o = (a + b) / 2;
      o = Math.min(b - 1, Math.max(a + 1, Math.min(k + innerRows, Math.max(k, Math.round(o)))));
      const { key, newer } = yield* probe(outer, inner, scopes, held, pg, o);
      const h = o - newer;
      if (h <= k) [a, ha, keyA] = [o, h, key];
      else [b, hb] = [o, h];
      // Two probes in turn that did not halve the bracket make the next one bisect it.
      slow = b - a > lastWidth / 2 ? slow + 1 : 0;
      lastWidth = b - a;
    }
    // Without a probe below it, a is 0: the newest row.
    keyA ??= (yield* probe(outer, [], scopes, [], pg, 0)).key;
    // The k-th row is within [a, b); the page's other rows follow it at the difference's density.
    const least = b - a + Math.ceil((2 * (want - rows.length) * all!) / Math.max(total, 1)) + want;
    const { unit } = EXCEPT_WALK;
    const cap = least <= 16 * unit ? unit * Math.ceil(least / unit) : 2 ** Math.ceil(Math.log2(least));
    const args: Record<string, unknown> = {
      ...partitionArgs(outer, '', scopes[0]!),
      x_ts: keyA.ts,
      x_id: keyA.id,
      skip: k - ha,
      limit: want - rows.length,
    };
    inner.forEach((p, i) => Object.assign(args, partitionArgs(p, `i${i}`, scopes[i + 1]!)));
    const got = yield {
      stmt: walkStmt(
        outer.def,
        inner.map((p) => p.def),
        pg,
        cap,
      ),
      args,
    };
    // The k-th row lies within the walk (cap ≥ b − a), so a walk that finds nothing means the counts are wrong.
    if (got.length === 0) throw new Error(`rank ${outer.def.name}: the counts of ${scopes.join(', ')} are out of step with their rows`);
    rows.push(...got);
    k += got.length;
  }
  return { total, rows };
}
