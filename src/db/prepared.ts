// The hottest reads skip Kysely's per-query work (building, compiling, the connection mutex and
// its promise chain), which on SQLite costs as much as running the query. Such a query is built
// with Kysely once per database handle and its transactions; each call then only binds its
// arguments. Outside a
// transaction it runs on the handle's fast reader:
// - SQLite: a second, read-only connection, called synchronously. WAL gives every statement on it
//   the last committed state, and it never queues behind a write transaction that holds the main
//   connection across awaits (nor can it see that transaction's uncommitted rows).
// - PostgreSQL: the shared client, which prepares a statement once per connection (src/db/postgres/connection.ts).
// Inside a transaction it runs on the transaction's connection, through Kysely.
import { hash } from 'node:crypto';
import { type Compilable, CompiledQuery } from 'kysely';
import type { Executor } from './types.ts';

export interface FastReader {
  all<R>(name: string, sql: string, params: readonly unknown[]): R[] | Promise<R[]>;
  /** SQLite: runs `fn` synchronously in one read transaction of the reader, so that several
   *  statements see one snapshot (src/db/rank/index.ts). */
  snapshot?<T>(fn: (all: <R>(sql: string, params: readonly unknown[]) => R[]) => T): T;
}

const readers = new WeakMap<object, FastReader>();
// By the dialect adapter, which a handle shares with its transactions: what is committed, read
// from inside a transaction.
const outside = new WeakMap<object, FastReader>();

/** Called by openDb: reads through `prepared` on this handle (not its transactions) use `reader`. */
export function registerFastReader(db: Executor, reader: FastReader): void {
  readers.set(db, reader);
  outside.set(db.getExecutor().adapter, reader);
}

/** The fast reader of this handle; undefined for a transaction. */
export function fastReader(db: Executor): FastReader | undefined {
  return readers.get(db);
}

interface Compiled {
  /** Named after its SQL, so that one name never stands for two statements. */
  name: string;
  sql: string;
  /** For each bound parameter: the index of the argument it comes from, or the constant itself. */
  params: ({ arg: number } | { value: unknown })[];
}

/** The statements `build` gives, compiled with stand-ins for its `arity` arguments. */
function compileAll<A extends unknown[]>(db: Executor, build: (db: Executor, ...args: A) => readonly Compilable[], arity: number): Compiled[] {
  // Stand-in arguments, recognisable among the compiled parameters, map each parameter to its source.
  const marks = Array.from({ length: arity }, (_, i) => `\u0000prepared-argument-${i}`);
  const queries = build(db, ...(marks as A)).map((q) => q.compile());
  // An argument that is bound by none of them would be frozen into the SQL at its first value.
  const unbound = marks.findIndex((m) => !queries.some((q) => q.parameters.includes(m)));
  if (unbound >= 0) throw new Error(`prepared query: argument ${unbound} is not a bound parameter`);
  return queries.map((query) => ({
    name: `rdx_${hash('sha256', query.sql, 'hex').slice(0, 32)}`,
    sql: query.sql,
    params: query.parameters.map((p) => {
      const arg = marks.indexOf(p as string);
      return arg >= 0 ? { arg } : { value: p };
    }),
  }));
}

function compile<A extends unknown[]>(db: Executor, build: (db: Executor, ...args: A) => Compilable, arity: number): Compiled {
  return compileAll(db, (d: Executor, ...args: A) => [build(d, ...args)], arity)[0]!;
}

/**
 * A read query compiled once per database handle (its transactions included). `build` must use its arguments only as bound
 * values (where clauses, limits), never to choose the query's shape, and declare each of them
 * (no default or rest parameters: their count is taken from `build.length`).
 */
export function prepared<A extends unknown[], R>(build: (db: Executor, ...args: A) => Compilable<R>) {
  const arity = build.length - 1;
  // By the dialect adapter, which a handle shares with its transactions: a read inside a write
  // binds the statement its handle compiled instead of compiling it again in each transaction.
  const cache = new WeakMap<object, Compiled>();
  const bind = (db: Executor, args: A): { compiled: Compiled; params: unknown[] } => {
    if (args.length !== arity) throw new Error(`prepared query: ${args.length} arguments for ${arity} parameters`);
    const adapter = db.getExecutor().adapter;
    let compiled = cache.get(adapter);
    if (!compiled) {
      compiled = compile(db, build, arity);
      cache.set(adapter, compiled);
    }
    return { compiled, params: compiled.params.map((p) => ('arg' in p ? args[p.arg] : p.value)) };
  };
  const run = async (db: Executor, ...args: A): Promise<R[]> => {
    const { compiled, params } = bind(db, args);
    const reader = readers.get(db);
    if (reader) return reader.all<R>(compiled.name, compiled.sql, params);
    return (await db.executeQuery<R>(CompiledQuery.raw(compiled.sql, params))).rows;
  };
  /**
   * The same read of what is committed, outside any transaction, even when `db` is one; undefined
   * for a handle that has no reader outside its transactions (`rolodex import`'s, src/db/database.ts).
   */
  const committed = async (db: Executor, ...args: A): Promise<R[] | undefined> => {
    const { compiled, params } = bind(db, args);
    return outside.get(db.getExecutor().adapter)?.all<R>(compiled.name, compiled.sql, params);
  };
  return Object.assign(run, { committed });
}

/**
 * The statements `build` gives, compiled once per dialect adapter (a handle and its transactions
 * share one): each call binds `args` into new compiled statements. Each argument is bound by one of
 * them at least. The layer's own, for `preparedWrite` and the prepared forms of portable.ts.
 */
export function bindOnce<A extends unknown[]>(build: (db: Executor, ...args: A) => readonly Compilable[], arity: number) {
  const cache = new WeakMap<object, Compiled[]>();
  return (db: Executor, args: A): { compile(): CompiledQuery }[] => {
    if (args.length !== arity) throw new Error(`prepared write: ${args.length} arguments for ${arity} parameters`);
    const adapter = db.getExecutor().adapter;
    let compiled = cache.get(adapter);
    if (!compiled) {
      compiled = compileAll(db, build, arity);
      cache.set(adapter, compiled);
    }
    return compiled.map(({ sql, params }) => {
      const bound = params.map((p) => ('arg' in p ? args[p.arg] : p.value));
      // A new statement at each compile: the pipeline marks the statements it is handed (src/db/pipeline.ts).
      return { compile: () => CompiledQuery.raw(sql, bound) };
    });
  };
}

/**
 * A write statement built and compiled once per dialect, as `prepared` builds a read; each call
 * binds its arguments into a new compiled statement, to be run as any other (`deferredInsert`,
 * `executeQuery`). For the writes of a hot path whose shape never changes (a list's row inserted by
 * its create), where Kysely's building and compiling cost more than the database's own work. The
 * same rules for `build` as for `prepared`.
 */
export function preparedWrite<A extends unknown[]>(build: (db: Executor, ...args: A) => Compilable) {
  const bind = bindOnce((db: Executor, ...args: A) => [build(db, ...args)], build.length - 1);
  return (db: Executor, ...args: A): { compile(): CompiledQuery } => bind(db, args)[0]!;
}
