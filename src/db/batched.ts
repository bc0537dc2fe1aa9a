// Point reads by key gathered over one turn of the event loop (docs/performance.md §Point reads
// gathered per turn). On PostgreSQL each statement costs the process a message to build, a
// result to parse and a promise, and the server a Bind and Execute, whatever it returns; the
// hottest point read (GET /v1/lists/{id}) is mostly that overhead. So outside a transaction the
// keys asked for in one turn go out as one statement for all of them (`= any($1)`), and each
// caller gets its own rows.
//
// No caller can see an older state than a read of its own would have shown: a batch is sent at
// the end of the turn its callers asked in, so the statement starts after each of them did.
// SQLite reads are synchronous calls on the read-only connection (src/db/prepared.ts) and a
// transaction needs its own connection and snapshot: both take `single`.
import type { Compilable, CompiledQuery } from 'kysely';
import { perTurn } from '../lib/per-turn.ts';
import { fastReader } from './prepared.ts';
import { isPostgres } from './rank-def.ts';
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
}

/** `(db, key)` → the rows of that key (in the order the statement gives them). */
export function batchedRead<R>(spec: BatchedRead<R>): (db: Executor, key: string) => Promise<R[]> {
  const gatherers = new WeakMap<object, (key: string, waiter: Waiter<R>) => void>();
  let compiled: CompiledQuery | undefined;

  const flush = (db: Executor, batch: Map<string, Waiter<R>[]>) => {
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
    try {
      compiled ??= spec.query(db).compile();
      const keys = [...batch.keys()];
      const params = compiled.parameters.map((p) => (p === KEYS ? keys : p));
      Promise.resolve(fastReader(db)!.all<R>('', compiled.sql, params)).then(settle, fail);
    } catch (err) {
      fail(err);
    }
  };

  return (db, key) => {
    if (!isPostgres(db) || !fastReader(db)) return spec.single(db, key);
    let gather = gatherers.get(db);
    if (!gather) gatherers.set(db, (gather = perTurn((batch: Map<string, Waiter<R>[]>) => flush(db, batch))));
    const add = gather;
    return new Promise<R[]>((resolve, reject) => add(key, { resolve, reject }));
  };
}
