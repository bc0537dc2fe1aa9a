// What a bulk load asks of the database beyond its statements: SQLite's session settings, its
// journal, and index builds after the rows (docs/import.md §Speed). PostgreSQL needs none of it:
// each function is then a no-op, so that the import's code is one for both databases.
import { availableParallelism } from 'node:os';
import { sql } from 'kysely';
import { withBusyTimeout } from './busy-timeout.ts';
import { isPostgres } from './dialect.ts';
import { deferred } from './pipeline.ts';
import type { Executor, Tx } from './types.ts';

/**
 * On SQLite, drops the indexes named in `indexes` and returns the step that builds them again
 * with the very statements that made them, in the same transaction: one sorted build after the
 * rows instead of scattered inserts. The caller runs that step once its rows are written (a bulk
 * load may span several chunks of an import). Atomic like any SQLite DDL (a rollback restores
 * them), and other connections keep reading their snapshot, indexes included. `sortRunsKiB`
 * gives an index's build the memory its sorter may fill before it writes a sorted run. On
 * PostgreSQL, which would lock the tables against readers, nothing is dropped and the step does
 * nothing.
 */
export async function dropIndexesUntilBuilt(
  tx: Tx,
  indexes: readonly string[],
  sortRunsKiB: Readonly<Record<string, number | undefined>>,
): Promise<() => Promise<void>> {
  if (isPostgres(tx)) return async () => {};
  const { rows } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
    where type = 'index' and name in (${sql.join([...indexes])})`.execute(tx);
  const cache = await sql<{ cache_size: number }>`pragma cache_size`.execute(tx);
  const cacheSize = Number(cache.rows[0]?.cache_size);
  for (const r of rows) await sql`drop index ${sql.id(r.name)}`.execute(tx);
  return async () => {
    // Deferred: with the import's writer thread (src/db/sqlite/writer.ts), the next kinds' work is
    // built while the indexes are. The pragmas go out in the same order, between the builds.
    const setCache = (size: number) => deferred(tx, sql.raw(`pragma cache_size = ${Math.trunc(size)}`));
    for (const r of rows) {
      const runs = sortRunsKiB[r.name];
      if (runs !== undefined) await setCache(-runs);
      await deferred(tx, sql.raw(r.sql));
      if (runs !== undefined) await setCache(cacheSize);
    }
  };
}

/**
 * Plans each statement of the transaction with its own values, on PostgreSQL (`plan_cache_mode`
 * for this transaction only). An import's tables grow by the hundred thousand inside its
 * transaction while its statements repeat, and a generic plan chosen while a table was small (a
 * scan of the change log compared with a thousand ids, say) is kept as the table grows: each run
 * of the statement then reads the table whole (docs/import.md §Speed). Nothing to do on SQLite.
 */
export async function planWithValues(tx: Tx): Promise<void> {
  if (isPostgres(tx)) await sql`set local plan_cache_mode = force_custom_plan`.execute(tx);
}

/** The page cache of the import's SQLite connection, in KiB: a bound, whatever the import's size (docs/import.md §Memory). */
export const IMPORT_CACHE_KIB = 4_096;

/**
 * Gives the command's SQLite connection a page cache of IMPORT_CACHE_KIB and lets its sorts use
 * helper threads (docs/import.md §Speed). The cache is a bound, not a size to fill: an atomic
 * import's one transaction keeps every page it writes in the cache until the cache is full, so a
 * cache larger than what the import writes held all of it, and the process grew with the import.
 * Past the bound SQLite writes dirty pages to the file and reads them back from the system's
 * cache. Nothing to do on PostgreSQL, whose cache is the server's.
 */
export async function useBulkCache(db: Executor): Promise<void> {
  if (isPostgres(db)) return;
  await sql.raw(`pragma cache_size = -${IMPORT_CACHE_KIB}`).execute(db);
  // The sorts of a bulk load (the value indexes' builds) may use
  // helper threads: the command has the processors to itself meanwhile (docs/import.md §Speed).
  await sql.raw(`pragma threads = ${Math.min(4, availableParallelism())}`).execute(db);
}

/**
 * SQLite, a batched import (docs/import.md §Sharing the database): a statement that may fail
 * half-way inside a transaction (a multi-row insert under a unique key) first saves each page it
 * changes to a statement journal, a temporary file once past 64 KiB; kept in memory instead, it is
 * no write to the file system inside a chunk's hold of the lock. A batched chunk is small, so one
 * statement's journal is too.
 */
export async function statementJournalsInMemory(db: Executor): Promise<void> {
  if (isPostgres(db)) return;
  await sql`pragma temp_store = memory`.execute(db);
}

/** How an import's pages reach the database file; undefined on PostgreSQL. */
export type ImportJournal = 'rollback' | 'wal' | undefined;

/**
 * SQLite: when no other connection has the database open, switches it to a rollback journal for
 * the import, and `restore` switches it back to WAL (docs/import.md §Speed, The database alone).
 * Through the WAL every page the import writes is written twice: into the log, then copied into
 * the database by the checkpoint of the commit. With a rollback journal the pages go straight to
 * the database file, and only the pages the file held before are saved to the journal, to be put
 * back if the import fails. Leaving WAL needs every other connection closed, which is how "alone"
 * is known: with the server or another command connected, the switch fails at once (no busy wait)
 * and the import writes through the WAL, as the server does. Synchronous FULL is the rollback
 * journal's durable setting (WAL's NORMAL is not, there).
 */
export async function takeDatabaseAlone(db: Executor): Promise<{ journal: ImportJournal; restore: () => Promise<void> }> {
  if (isPostgres(db)) return { journal: undefined, restore: async () => {} };
  const alone = await withBusyTimeout(db, 0, () =>
    unlessBusy(async () => (await sql<{ journal_mode: string }>`pragma journal_mode = delete`.execute(db)).rows[0]?.journal_mode === 'delete'),
  );
  if (alone !== true) return { journal: 'wal', restore: async () => {} };
  await sql`pragma synchronous = full`.execute(db);
  return {
    journal: 'rollback',
    restore: async () => {
      // A process that opened the file meanwhile waited for the import's lock and sets WAL
      // itself once it has it (src/db/sqlite/cached.ts): this switch then gives way to it.
      await unlessBusy(() => sql`pragma journal_mode = wal`.execute(db));
      await sql`pragma synchronous = normal`.execute(db);
    },
  };
}

const SQLITE_BUSY = 5;

/** `fn`'s result, or undefined when SQLite answered that the database is locked. */
async function unlessBusy<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if ((err as { errcode?: number }).errcode !== SQLITE_BUSY) throw err;
    return undefined;
  }
}
