// A hot read by key, declared once (docs/architecture.md §Database layer): the base select and its
// key column give every statement the read is sent as, so that a repository never chooses
// between them.
// - one key, inside a transaction: `select … where key = ?`, prepared (src/db/prepared.ts);
// - several keys, inside a transaction or where no fast reader is: `… where key in (the keys of
//   one JSON array)`, prepared, one statement text whatever the number of keys;
// - outside a transaction, the keys asked for in one turn of the event loop, gathered into one of
//   these statements, `= any($1)` on PostgreSQL (src/db/batched.ts).
import { type SelectQueryBuilder, sql } from 'kysely';
import { batchedRead, jsonKeys, KEYS } from './batched.ts';
import { fastReader, prepared } from './prepared.ts';
import type { Database, Executor } from './types.ts';

export interface KeyedRead<R> {
  /** The rows of `key`: gathered with the turn's other keys outside a transaction, one-key inside. */
  (db: Executor, key: string): Promise<R[]>;
  /** The rows of `keys`: each key gathered into the turn's batch outside a transaction, one statement for all inside. */
  many(db: Executor, keys: readonly string[]): Promise<R[]>;
  /**
   * The one-key statement sent at once, for a read that goes out alongside another statement:
   * gathered to the end of the turn, it could leave after the other's answer came, one round trip
   * later (docs/pages.md §Round trips of a page).
   */
  now(db: Executor, key: string): Promise<R[]>;
}

export interface KeyedReadSpec<R> {
  /** The read without its key: a select whose rows are R. */
  select: (db: Executor) => SelectQueryBuilder<Database, any, R>;
  /** The key column, as the select names it (`'id'`, `'r.id'`). */
  key: string;
  /** The key a row answers: the batch hands each caller the rows of its key. */
  keyOf: (row: R) => string;
}

export function keyedRead<R>(spec: KeyedReadSpec<R>): KeyedRead<R> {
  const column = sql.ref<string>(spec.key);
  const one = prepared((db: Executor, key: string) => spec.select(db).where(column, '=', key));
  const some = prepared((db: Executor, keysJson: string) => spec.select(db).where(column, 'in', jsonKeys(db, keysJson)));
  const gathered = batchedRead<R>({
    query: (db) => spec.select(db).where(column, '=', sql<string>`any(${KEYS})`),
    keyOf: spec.keyOf,
    single: (db, key) => one(db, key),
    many: (db, keys) => some(db, JSON.stringify(keys)),
  });
  const many = async (db: Executor, keys: readonly string[]): Promise<R[]> =>
    fastReader(db) ? (await Promise.all(keys.map((key) => gathered(db, key)))).flat() : some(db, JSON.stringify(keys));
  return Object.assign(gathered, { many, now: (db: Executor, key: string) => one(db, key) });
}
