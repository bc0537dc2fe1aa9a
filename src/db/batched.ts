// Point reads by key gathered over one turn of the event loop (docs/performance.md §Point reads
// gathered per turn). On PostgreSQL each statement costs the process a message to build, a
// result to parse and a promise, and the server a Bind and Execute, whatever it returns; the
// hottest point read (GET /v1/lists/{id}) is mostly that overhead. So outside a transaction the
// keys asked for in one turn go out as one statement for all of them (`= any($1)`), and each
// caller gets its own row.
//
// No caller can see an older state than a read of its own would have shown: a batch is sent at
// the end of the turn its callers asked in, so the statement starts after each of them did.
// SQLite reads are synchronous calls on the read-only connection (src/db/prepared.ts) and a
// transaction needs its own connection and snapshot: both take `single`.
import { fastReader } from './prepared.ts';
import { isPostgres } from './rank-def.ts';
import type { Executor } from './types.ts';

interface Waiter<R> {
  resolve(row: R | undefined): void;
  reject(err: unknown): void;
}

export interface BatchedRead<R> {
  /** PostgreSQL text of the batch: `$1` is the array of keys. */
  text: string;
  keyOf(row: R): string;
  /** One key's read, for SQLite and transactions. */
  single(db: Executor, key: string): Promise<R | undefined>;
}

/** `(db, key)` → the row with that key, or undefined. */
export function batchedRead<R>(spec: BatchedRead<R>): (db: Executor, key: string) => Promise<R | undefined> {
  const pending = new WeakMap<object, Map<string, Waiter<R>[]>>();

  const flush = (db: Executor) => {
    const batch = pending.get(db);
    pending.delete(db);
    if (!batch) return;
    const reader = fastReader(db);
    const settle = (rows: R[]) => {
      const byKey = new Map(rows.map((r) => [spec.keyOf(r), r]));
      for (const [key, waiters] of batch) for (const w of waiters) w.resolve(byKey.get(key));
    };
    const fail = (err: unknown) => {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    };
    try {
      Promise.resolve(reader!.all<R>('', spec.text, [[...batch.keys()]])).then(settle, fail);
    } catch (err) {
      fail(err);
    }
  };

  return (db, key) => {
    if (!isPostgres(db) || !fastReader(db)) return spec.single(db, key);
    let batch = pending.get(db);
    if (!batch) {
      pending.set(db, (batch = new Map<string, Waiter<R>[]>()));
      setImmediate(flush, db);
    }
    let waiters = batch.get(key);
    if (!waiters) batch.set(key, (waiters = []));
    const list = waiters;
    return new Promise<R | undefined>((resolve, reject) => list.push({ resolve, reject }));
  };
}
