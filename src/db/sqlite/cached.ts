// A connection of node:sqlite with its prepared statements cached (preparing is a large part of a
// small query's cost), and the settings every writing connection has. Kysely's adapter
// (src/db/sqlite/connection.ts) is built on it; the threads that hold a connection of their own
// (src/db/sqlite/writer-thread.ts, scan-thread.ts) load this file and not Kysely, whose modules
// they never run (docs/import.md §Memory).
import { closeSync, openSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { WAL_LIMIT } from './pin.ts';
import { BUSY_TIMEOUT_MS } from './settings.ts';

/** Prepared statements a connection keeps. */
export const STATEMENT_CACHE = 500;
/**
 * node:sqlite frees a prepared statement only when V8 collects its object, which is small and
 * long-lived, so an evicted statement's memory (some KB to hundreds of KB, in SQLite's malloc)
 * stays until a full collection, which a thread whose heap barely grows seldom runs. A connection
 * given `collect` (the import's writer thread) runs it after this many evictions, so that the
 * evicted statements hold a bounded amount (docs/import.md §Memory).
 */
export const EVICTIONS_PER_COLLECTION = 64;

export interface CacheOptions {
  /** A full garbage collection of the connection's thread (src/lib/gc.ts). */
  collect?: () => void;
}

export class CachedDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  #cache = new Map<string, SqliteStatement>();
  #evicted = 0;
  readonly #collect: (() => void) | undefined;

  constructor(raw: DatabaseSync, opts: CacheOptions = {}) {
    this.raw = raw;
    this.#collect = opts.collect;
  }

  prepare(sql: string): SqliteStatement {
    let stmt = this.#cache.get(sql);
    if (stmt) return stmt;
    stmt = wrap(this.raw.prepare(sql));
    if (this.#cache.size >= STATEMENT_CACHE) {
      const oldest = this.#cache.keys().next().value as string;
      this.#cache.delete(oldest);
      if (++this.#evicted % EVICTIONS_PER_COLLECTION === 0) this.#collect?.();
    }
    this.#cache.set(sql, stmt);
    return stmt;
  }

  all<R>(sql: string, params: readonly unknown[]): R[] {
    return this.prepare(sql).all(params) as R[];
  }

  /** Runs `fn` inside one read transaction: every statement of it sees the same snapshot. */
  snapshot<T>(fn: (all: <R>(sql: string, params: readonly unknown[]) => R[]) => T): T {
    this.raw.exec('BEGIN');
    try {
      return fn((sql, params) => this.all(sql, params));
    } finally {
      this.raw.exec('COMMIT');
    }
  }

  close(): void {
    this.#cache.clear();
    if (this.raw.isOpen) this.raw.close();
  }
}

function wrap(stmt: StatementSync): SqliteStatement {
  const reader = stmt.columns().length > 0;
  return {
    reader,
    all: (params) => stmt.all(...(params as never[])),
    run: (params) => stmt.run(...(params as never[])),
    iterate: (params) => stmt.iterate(...(params as never[])) as IterableIterator<unknown>,
  };
}

/**
 * Makes the database file readable by its owner alone (0600, whatever the umask) when it does not
 * exist yet, before SQLite would make it 0644 less the umask: SQLite gives its -wal and
 * -shm files the mode of the database file (docs/deploy.md §The data directory's modes). A file
 * that exists keeps its mode; one that cannot be made is left to SQLite, which says why.
 */
function makeOwnerOnly(file: string): void {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return;
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch {
    // There already, or not to be made here: SQLite opens it, or names its own failure.
  }
}

/** A writing connection to `file`, with the settings every one of them has. */
export function openConnection(file: string, opts: CacheOptions = {}): CachedDatabase {
  makeOwnerOnly(file);
  const raw = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
  // WAL lets readers proceed while one writer writes; NORMAL sync is durable across process
  // crashes in WAL mode (only an OS crash can lose the last transactions).
  raw.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};`);
  // SQLite's default page cache is 2 MB: a large write (an import writing the value and trigram
  // indexes) would evict and read back index pages for every batch. 64 MB keeps them.
  raw.exec('PRAGMA cache_size = -65536;');
  // When the WAL restarts, the file shrinks back to this size: the read-slot pin lets go while it
  // is larger (src/db/sqlite/pin.ts).
  raw.exec(`PRAGMA journal_size_limit = ${WAL_LIMIT};`);
  // Deleted content is overwritten with zeros, in the page and in freed pages, so that a purged
  // record's values (and the old versions of updated rows) leave the file (docs/trash.md §Purge).
  raw.exec('PRAGMA secure_delete = ON;');
  return new CachedDatabase(raw, opts);
}
