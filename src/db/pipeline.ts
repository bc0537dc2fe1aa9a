// Statements whose answer the caller does not need (a lock, an insert, a counter's update) can be
// marked `deferred`: on PostgreSQL, inside a transaction, they go out together with the next
// statement that is awaited, or with COMMIT (src/db/postgres/connection.ts), in order, so that a transaction
// holding a lock spends one round trip where it spent several. An error of a deferred statement
// surfaces there, as that statement's own error. The writer thread of `rolodex import` on SQLite
// (src/db/sqlite/writer.ts) does the same: it sends a deferred statement without waiting for it.
// Elsewhere on SQLite, and outside a transaction, a deferred statement runs at once, as any other.
//
// A statement whose answer is only needed after COMMIT (a ranked leaf's new count, to split it if
// it grew too large: docs/pages.md §Keeping it exact) goes out the same way with `deferredRows`,
// and work that can wait until then is registered with `afterCommit` (src/db/write.ts).
import { type Compilable, type CompiledQuery, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database, Executor, Tx } from './types.ts';

const marked = new WeakSet<CompiledQuery>();
const queued = new WeakSet<CompiledQuery>();
const sinks = new WeakMap<CompiledQuery, (rows: unknown[]) => void>();

export function isDeferred(query: CompiledQuery): boolean {
  return marked.has(query);
}

// A statement that only inserts new rows, or takes a scope's lock for inserts (src/db/rank/lock.ts):
// on PostgreSQL, transactions made of nothing else may commit together, as one
// (src/db/postgres/group-commit.ts). Such statements take shared locks only, besides their new rows, so
// joining them adds no wait of one transaction on another.
const groupable = new WeakSet<CompiledQuery>();

/** Marks `query` as one that only inserts new rows or takes a partition's lock for inserts. */
export function markGroupable(query: CompiledQuery): CompiledQuery {
  groupable.add(query);
  return query;
}

export function isGroupable(query: CompiledQuery): boolean {
  return groupable.has(query);
}

/** Whether someone reads the statement's rows (it went out with `deferredRows`). */
export function wantsRows(query: CompiledQuery): boolean {
  return sinks.has(query);
}

/** Called by the PostgreSQL connection: `query` waits for the next write. */
export function markQueued(query: CompiledQuery): void {
  queued.add(query);
}

/** Called by the PostgreSQL connection with a queued statement's rows, once they came. */
export function settleQueued(query: CompiledQuery, rows: unknown[]): void {
  sinks.get(query)?.(rows);
}

function compileIn(tx: Executor, query: Compilable | RawBuilder<unknown>): CompiledQuery {
  const compiled = 'isRawBuilder' in query ? query.compile(tx) : query.compile();
  marked.add(compiled);
  return compiled;
}

/** Runs `query` in `tx`, sending it with the next statement whose answer is awaited. */
export async function deferred(tx: Tx, query: Compilable | RawBuilder<unknown>): Promise<void> {
  await tx.executeQuery(compileIn(tx, query));
}

/**
 * As `deferred`, on any executor: for the layer's own statements that also run in a migration's
 * transaction, which `write` did not open, or outside a transaction, where they run at once.
 */
export async function deferredOn(db: Executor, query: Compilable | RawBuilder<unknown>): Promise<void> {
  await db.executeQuery(compileIn(db, query));
}

/** As `deferred`, for a statement that only inserts new rows (see markGroupable). */
export async function deferredInsert(tx: Tx, query: Compilable | RawBuilder<unknown>): Promise<void> {
  await tx.executeQuery(markGroupable(compileIn(tx, query)));
}

/**
 * Resolves once every statement sent in `tx` before it has run: with an awaited statement that
 * answers nothing, which goes out behind the deferred ones and is answered after them.
 */
export async function settled(tx: Tx): Promise<void> {
  await sql`select 1`.execute(tx);
}

/**
 * As `deferred`; `rows` holds the statement's rows once it ran: at once where deferred statements
 * run at once, otherwise after the awaited statement (or COMMIT) it went out with.
 */
export function deferredRows<R>(tx: Transaction<Database>, query: Compilable<R> | RawBuilder<R>): Promise<{ readonly rows?: R[] }> {
  return rowsLater(tx, compileIn(tx, query));
}

/** As `deferredRows`, for a statement that only inserts new rows (see markGroupable). */
export function deferredInsertRows<R>(tx: Tx, query: Compilable<R> | RawBuilder<R>): Promise<{ readonly rows?: R[] }> {
  return rowsLater(tx, markGroupable(compileIn(tx, query)));
}

async function rowsLater<R>(tx: Transaction<Database>, compiled: CompiledQuery): Promise<{ readonly rows?: R[] }> {
  const out: { rows?: R[] } = {};
  sinks.set(compiled, (rows) => (out.rows = rows as R[]));
  const r = await tx.executeQuery<R>(compiled);
  if (!queued.has(compiled)) out.rows = r.rows;
  return out;
}
