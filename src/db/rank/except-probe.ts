// A probe of a difference of ranked sets (docs/pages.md §Differences of sets, src/db/rank/except.ts):
// the outer row at an offset and, for each inner partition, its rows at or older than that row's
// key, counted through the set's levels (each bounded like a page). On PostgreSQL one statement;
// on SQLite, which seeks no index on a row value computed inside a statement, a few with bound
// values, run one after another in the page's snapshot.
import { LEVELS, type RankDef } from './def.ts';
import { Builder, cached, inPartition, pagePostgres, pageSqlite, q, type SqlitePageStep, type Stmt } from './sql.ts';

/** One partition of a ranked set. */
export interface RankPartition {
  def: RankDef;
  values: readonly string[];
}

export type Row = Record<string, unknown>;
/**
 * Statements none of which needs another's answer: on PostgreSQL they go out together, one round
 * trip. `last`: its answer usually completes the page (a walk).
 */
export interface ExceptBatch {
  steps: SqlitePageStep[];
  last?: boolean;
}
export interface Key {
  ts: unknown;
  id: unknown;
}

export function partitionArgs(p: RankPartition, prefix: string, scope: string): Record<string, unknown> {
  const args: Record<string, unknown> = { [`${prefix}scope`]: scope };
  p.def.by.forEach((_c, i) => (args[`${prefix}by${i}`] = p.values[i]));
  Object.values(p.def.where ?? {}).forEach((v, i) => (args[`${prefix}where${i}`] = v));
  return args;
}

/** Entries' counts on `level` in a range, deltas added where the set keeps them (PostgreSQL). */
export function levelSum(def: RankDef, pg: boolean, S: string, level: number, range: string): string {
  const n = `(select coalesce(sum(n), 0) from rank_buckets where scope = ${S} and level = ${level} and ${range})`;
  if (!pg || def.appends !== true) return n;
  return `${n} + (select coalesce(sum(d), 0) from rank_deltas where scope = ${S} and level = ${level} and ${range})`;
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

/** Statements one after another, each a batch of its own. */
function* alone<T>(steps: Generator<SqlitePageStep, T, Row[]>): Generator<ExceptBatch, T, Row[][]> {
  let next = steps.next();
  while (!next.done) next = steps.next((yield { steps: [next.value] })[0]!);
  return next.value;
}

export interface Probed {
  o: number;
  key: Key;
  newer: number;
}

/** The outer rows at offsets `os` and, for each, the rows of the inner partitions newer than it: on PostgreSQL one batch. */
export function* probe(
  outer: RankPartition,
  inner: readonly RankPartition[],
  scopes: readonly string[],
  held: readonly number[],
  pg: boolean,
  os: readonly number[],
): Generator<ExceptBatch, Probed[], Row[][]> {
  if (!pg) {
    const out: Probed[] = [];
    for (const o of os) {
      const key = yield* alone(seekSqlite(outer, scopes[0]!, o));
      let newer = 0;
      for (let i = 0; i < inner.length; i++) newer += held[i]! - (yield* alone(heldSqlite(inner[i]!, scopes[i + 1]!, key)));
      out.push({ o, key, newer });
    }
    return out;
  }
  const args: Record<string, unknown> = { ...partitionArgs(outer, '', scopes[0]!), limit: 1 };
  inner.forEach((p, i) => Object.assign(args, partitionArgs(p, `i${i}`, scopes[i + 1]!)));
  const stmt = probePostgres(
    outer.def,
    inner.map((p) => p.def),
  );
  const answers = yield { steps: os.map((o) => ({ stmt, args: { ...args, k: o } })) };
  return os.map((o, j) => {
    const r = answers[j]![0];
    if (!r) throw new Error(`rank ${outer.def.name}: no row at ${o} of ${scopes[0]!}`);
    return { o, key: { ts: r.x_ts, id: r.x_id }, newer: held.reduce((sum, h, i) => sum + h - Number(r[`n${i}`]), 0) };
  });
}
