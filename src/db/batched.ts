// Point reads by key gathered over one turn of the event loop (docs/performance.md §Point reads
// gathered per turn): outside a transaction the keys asked for in one turn are read with one
// statement for all of them, sent at the end of the turn, and each caller gets its own rows.
// - PostgreSQL: each statement costs the process a message to build, a result to parse and a
//   promise, and the server a Bind and Execute, whatever it returns; the hottest point read
//   (GET /v1/lists/{id}) is mostly that overhead. The keys go as one array (`= any($1)`).
// - SQLite (reads on the read-only connection, src/db/prepared.ts): a statement run between two
//   requests' other work finds the processor's caches cold and costs several times what it costs
//   run again at once. One statement for the turn's keys, bound
//   as one JSON array (`jsonKeys`), pays that once.
//
// No caller can see an older state than a read of its own would have shown: a batch is sent at
// the end of the turn its callers asked in, so the statement starts after each of them did. A
// transaction needs its own connection and snapshot: it takes `single`.
import { type Compilable, type CompiledQuery, type RawBuilder, sql } from 'kysely';
import { perTurn } from '../lib/per-turn.ts';
import { fastReader } from './prepared.ts';
import { outsideBudget, withinBudget } from './request-budget.ts';
import { isPostgres } from './dialect.ts';
import type { Executor } from './types.ts';

interface Waiter<R> {
  resolve(rows: R[]): void;
  reject(err: unknown): void;
}

/** Stands for the array of keys among a batch statement's parameters: ``sql`any(${KEYS})` ``. */
export const KEYS: readonly string[] = Object.freeze([]);

export interface BatchedRead<R> {
  /** The batch statement on PostgreSQL, the same for every handle: one of its parameters is KEYS. */
  query(db: Executor): Compilable;
  keyOf(row: R): string;
  /** One key's read, for SQLite and transactions. */
  single(db: Executor, key: string): Promise<R[]>;
  /** The read of several keys at once on SQLite (through `jsonKeys`). */
  many(db: Executor, keys: string[]): Promise<R[]>;
}

/**
 * The keys of a JSON array bound as one parameter, as a subquery: `where id in ${jsonKeys(db, json)}`.
 * On PostgreSQL the parameter is declared text: declared json, postgres.js would encode the
 * string once more, as a JSON string.
 */
export function jsonKeys(db: Executor, json: string): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`(select json_array_elements_text(${json}::text::json))` : sql<string>`(select value from json_each(${json}))`;
}

/** `(db, key)` → the rows of that key (in the order the statement gives them). */
export function batchedRead<R>(spec: BatchedRead<R>): (db: Executor, key: string) => Promise<R[]> {
  const gatherers = new WeakMap<object, (key: string, waiter: Waiter<R>) => void>();
  let compiled: CompiledQuery | undefined;

  const flush = (db: Executor, batch: Map<string, Waiter<R>[]>) => {
    // Every waiter is settled exactly once, whatever happens: a failure while sorting the rows
    // fails the batch's callers instead of escaping as a rejection nobody handles.
    const settle = (rows: R[]) => {
      const byKey = new Map<string, R[]>();
      for (const r of rows) {
        const key = spec.keyOf(r);
        const list = byKey.get(key);
        if (list) list.push(r);
        else byKey.set(key, [r]);
      }
      for (const [key, waiters] of batch) for (const w of waiters) w.resolve(byKey.get(key) ?? []);
    };
    const fail = (err: unknown) => {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    };
    const keys = [...batch.keys()];
    new Promise<R[]>((resolve) => {
      if (!isPostgres(db)) return resolve(spec.many(db, keys));
      compiled ??= spec.query(db).compile();
      const params = compiled.parameters.map((p) => (p === KEYS ? keys : p));
      resolve(fastReader(db)!.all<R>('', compiled.sql, params));
    })
      .then(settle)
      .catch(fail);
  };

  return (db, key) => {
    if (!fastReader(db)) return spec.single(db, key);
    let gather = gatherers.get(db);
    // The batch is read for several requests at once: outside the budget of the one that began it,
    // each caller waiting within its own (src/db/request-budget.ts).
    if (!gather) gatherers.set(db, (gather = perTurn((batch: Map<string, Waiter<R>[]>) => outsideBudget(() => flush(db, batch)))));
    const add = gather;
    return withinBudget(new Promise<R[]>((resolve, reject) => add(key, { resolve, reject })));
  };
}
