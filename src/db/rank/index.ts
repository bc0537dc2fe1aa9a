// Pages at any offset for the cost of the first (docs/pages.md): an order-statistic index kept in
// SQL next to the rows it counts. A ranked set is a table, the equality columns that cut it into
// partitions (a list's members, a workspace's lists) and an order key (timestamp, id) read newest
// first. `rank_buckets` holds, per partition, LEVELS levels of entries: each entry counts the rows
// whose key lies between its `lo` and the next entry's `lo` on its level; level 0 entries hold
// about a thousand rows, and every boundary of a level is also one of the level below, so an
// entry above covers a few dozen entries below. A page descends the levels with running sums,
// then skips at most one leaf's rows through the table's own index.
import { CompiledQuery, sql, type Transaction } from 'kysely';
import type { Database, Executor } from '../types.ts';
import { fastReader } from '../prepared.ts';
import { isPostgres } from '../dialect.ts';
import { snapshotRead } from '../write.ts';
import { deferredRows } from '../pipeline.ts';
import { type RankDef, type RankKey, partitionKey } from './def.ts';
import { type Stmt, pagePostgres, pageSqlite, type SqlitePageStep } from './sql.ts';
import { type PartedRead, partedPostgres, partedSqlite } from './parted.ts';
import { type ExceptBatch, type ExceptResult, exceptSteps, firstPagePostgres, firstPageRows, oneByOne, type RankPartition } from './except.ts';

export { defineRank, LEVELS, lockOrder, type RankDef, type RankKey, type RankSizes, rankSizes, partitionKey, setRankSizes } from './def.ts';
export { rankChange, rankLoadEnd, rankLoadKeys, rankMoveRows, rankRebuild, takeLateLocks } from './write.ts';
export { lockLate } from './late.ts';
export { rankRebuildAll } from './build.ts';
export { type LockMode, lockPartition } from './lock.ts';
export { rankDelete, rankInsert, rankUpkeepSettled } from './append.ts';
export { type PartitionChange, rankChangeAcross } from './across.ts';
export type { PartedRead } from './parted.ts';
export { EXCEPT_WALK, type RankPartition } from './except.ts';

export interface RankPage<R> {
  /** Rows in the partition (the sum of its top-level entries). */
  total: number;
  rows: R[];
}

type Row = Record<string, unknown>;

function bind(stmt: Stmt, args: Record<string, unknown>): unknown[] {
  return stmt.args.map((a) => {
    if (!(a in args)) throw new Error(`rank: no value for ${a}`);
    return args[a];
  });
}

/** Strips the page's bookkeeping columns from a row of the table. */
function tableRow<R>(r: Row): R {
  const { rank_total: _t, rank_ts: _s, rank_id: _i, ...rest } = r;
  return rest as R;
}

// Pages of up to this many rows share one statement (and its cached plan); shorter ones are cut.
const SHARED_LIMIT = 25;

async function runOnPostgres(db: Executor, stmt: Stmt, args: Record<string, unknown>): Promise<{ total: number; found: Row[] }> {
  const params = bind(stmt, args);
  const reader = fastReader(db);
  const out = reader ? await reader.all<Row>(stmt.name, stmt.sql, params) : (await db.executeQuery<Row>(CompiledQuery.raw(stmt.sql, params))).rows;
  return { total: Number(out[0]?.rank_total ?? 0), found: out.filter((r) => r.rank_id !== null) };
}

function toPage<R>(total: number, found: Row[], limit: number, rows: boolean): RankPage<R> {
  return { total, rows: found.slice(0, limit).map((r) => (rows ? tableRow<R>(r) : ({ ts: r.rank_ts, id: r.rank_id } as R))) };
}

async function pageOnPostgres<R>(db: Executor, stmt: Stmt, args: Record<string, unknown>, rows: boolean): Promise<RankPage<R>> {
  const { total, found } = await runOnPostgres(db, stmt, args);
  return toPage(total, found, Number(args.limit), rows);
}

async function rankedPageOnPostgres<R>(db: Executor, def: RankDef, args: Record<string, unknown>, rows: boolean): Promise<RankPage<R>> {
  const most = Math.max(Number(args.limit), SHARED_LIMIT);
  let { total, found } = await runOnPostgres(db, pagePostgres(def, rows, most), args);
  // The bounded read holds the page in two leaves; fewer rows than the partition has from the offset
  // on means the lower leaf was short (sql.ts, pagePostgres): read again without the bound.
  if (found.length < Math.min(most, total - Number(args.k))) ({ total, found } = await runOnPostgres(db, pagePostgres(def, rows, most, false), args));
  return toPage(total, found, Number(args.limit), rows);
}

// Statement by statement, so that one driver runs it synchronously inside a read transaction and
// another awaits each step inside a transaction that is already a snapshot.
function drive<T>(steps: Generator<SqlitePageStep, T, Row[]>, all: (s: SqlitePageStep) => Row[]): T {
  let next = steps.next();
  while (!next.done) next = steps.next(all(next.value));
  return next.value;
}

async function driveAsync<S, A, T>(steps: Generator<S, T, A>, all: (s: S) => Promise<A>): Promise<T> {
  let next = steps.next();
  while (!next.done) next = steps.next(await all(next.value));
  return next.value;
}

type Steps = Generator<SqlitePageStep, { total: number; rows: Row[] }, Row[]>;

async function pageOnSqlite<R>(db: Executor, steps: Steps, rows: boolean): Promise<RankPage<R>> {
  const reader = fastReader(db);
  let found: { total: number; rows: Row[] };
  if (reader?.snapshot) {
    found = reader.snapshot((all) => drive(steps, (s) => all<Row>(s.stmt.sql, bind(s.stmt, s.args))));
  } else {
    const run = async (ex: Executor, s: SqlitePageStep) => (await ex.executeQuery<Row>(CompiledQuery.raw(s.stmt.sql, bind(s.stmt, s.args)))).rows;
    if (db.isTransaction) {
      found = await driveAsync(steps, (s) => run(db, s));
    } else {
      found = await db.connection().execute(async (c) => {
        await sql`begin`.execute(c);
        try {
          return await driveAsync(steps, (s) => run(c, s));
        } finally {
          await sql`commit`.execute(c);
        }
      });
    }
  }
  return { total: found.total, rows: found.rows.map((r) => (rows ? tableRow<R>(r) : ({ ts: r.rank_ts, id: r.rank_id } as R))) };
}

/**
 * The page at `offset` (newest first) of a partition and the partition's size, read in one snapshot. With
 * `rows`, the table's rows; otherwise their keys.
 */
export async function rankPage(db: Executor, def: RankDef, values: readonly string[], page: { offset: number; limit: number }): Promise<RankPage<RankKey>>;
export async function rankPage<R>(
  db: Executor,
  def: RankDef,
  values: readonly string[],
  page: { offset: number; limit: number },
  rows: true,
): Promise<RankPage<R>>;
export async function rankPage<R>(
  db: Executor,
  def: RankDef,
  values: readonly string[],
  page: { offset: number; limit: number },
  rows = false,
): Promise<RankPage<R>> {
  const args = pageArgs(def, values, page);
  if (isPostgres(db)) return rankedPageOnPostgres<R>(db, def, args, rows);
  return pageOnSqlite<R>(db, pageSqlite(def, args, rows), rows);
}

function pageArgs(def: RankDef, values: readonly string[], page: { offset: number; limit: number }): Record<string, unknown> {
  const args: Record<string, unknown> = { scope: partitionKey(def, values), k: page.offset, limit: page.limit };
  def.by.forEach((_c, i) => (args[`by${i}`] = values[i]));
  Object.values(def.where ?? {}).forEach((v, i) => (args[`where${i}`] = v));
  return args;
}

/**
 * The page at `offset` (newest first) of a partition of a set with parts, as `read` sees it: only the
 * rows of the parts it sees are counted and listed; its rows are those `read.rows` selects.
 */
export async function rankPartedPage<R>(
  db: Executor,
  def: RankDef,
  values: readonly string[],
  page: { offset: number; limit: number },
  read: PartedRead,
): Promise<RankPage<R>> {
  const args = { ...read.args, ...pageArgs(def, values, page) };
  if (isPostgres(db)) return pageOnPostgres<R>(db, partedPostgres(def, read, Math.max(page.limit, SHARED_LIMIT)), args, true);
  return pageOnSqlite<R>(db, partedSqlite(def, read, args), true);
}

const raw = (s: SqlitePageStep) => CompiledQuery.raw(s.stmt.sql, bind(s.stmt, s.args)) as CompiledQuery<Row>;

/** A batch's statements in one round trip: those before the last go out with it (src/db/pipeline.ts). */
async function together(tx: Transaction<Database>, batch: ExceptBatch): Promise<Row[][]> {
  const early: { readonly rows?: Row[] }[] = [];
  for (const s of batch.steps.slice(0, -1)) early.push(await deferredRows(tx, { compile: () => raw(s) }));
  const last = (await tx.executeQuery(raw(batch.steps.at(-1)!))).rows;
  return [...early.map((e) => e.rows ?? []), last];
}

/**
 * PostgreSQL: a page near the top is first read as one statement (its own snapshot); when that
 * does not hold it, the batches of exceptSteps run in a `repeatable read` transaction (or the
 * caller's), one round trip each. The walk that usually ends the page goes out with COMMIT; when
 * it does not end it (the walk ran short), the page is read again in a new snapshot, each batch
 * awaited.
 */
async function exceptOnPostgres(
  db: Executor,
  steps: () => Generator<ExceptBatch, ExceptResult, Row[][]>,
  first: SqlitePageStep | undefined,
  firstRows: (found: Row[]) => ExceptResult | undefined,
): Promise<ExceptResult> {
  if (first) {
    const reader = fastReader(db);
    const params = bind(first.stmt, first.args);
    const found = firstRows(reader ? await reader.all<Row>(first.stmt.name, first.stmt.sql, params) : (await db.executeQuery(raw(first))).rows);
    if (found) return found;
  }
  if (db.isTransaction) return driveAsync(steps(), (b) => together(db as Transaction<Database>, b));
  const started = steps();
  const ended = await snapshotRead(db, async (tx) => {
    let next = started.next();
    while (!next.done && next.value.last !== true) next = started.next(await together(tx, next.value));
    if (next.done) return next.value;
    const held: { readonly rows?: Row[] }[] = [];
    for (const s of next.value.steps) held.push(await deferredRows(tx, { compile: () => raw(s) }));
    return held;
  });
  if (!Array.isArray(ended)) return ended;
  const next = started.next(ended.map((h) => h.rows ?? []));
  if (next.done) return next.value;
  return snapshotRead(db, (tx) => driveAsync(steps(), (b) => together(tx, b)));
}

/**
 * The page at `offset` (newest first) of the rows of `outer` that none of `inner` holds, and their
 * number, read in one snapshot (src/db/rank/except.ts, docs/pages.md §Differences of sets). The inner
 * partitions are disjoint, and each of their rows is a row of `outer` under the same key.
 */
export async function rankExceptPage(
  db: Executor,
  outer: RankPartition,
  inner: readonly RankPartition[],
  page: { offset: number; limit: number },
): Promise<RankPage<RankKey>> {
  const scope = (p: RankPartition) => partitionKey(p.def, p.values);
  if (!isPostgres(db)) return pageOnSqlite<RankKey>(db, oneByOne(exceptSteps(outer, inner, page, false, scope)), false);
  const found = await exceptOnPostgres(
    db,
    () => exceptSteps(outer, inner, page, true, scope),
    firstPagePostgres(outer, inner, page, scope),
    (rows) => firstPageRows(rows, page, inner.length),
  );
  return { total: found.total, rows: found.rows.map((r) => ({ ts: r.rank_ts, id: r.rank_id }) as RankKey) };
}
