// The one query the import runs for every kind (server ids by externalId), and its session setup.
import { availableParallelism } from 'node:os';
import { sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import { isPostgres } from '../db/dialect.ts';
import type { Executor } from '../db/types.ts';

/** Tables whose rows carry a workspace and an externalId. */
export type ExternalTable = 'users' | 'channels' | 'files' | 'records';

/**
 * Server ids of a workspace's rows by externalId, in chunks. `kind` narrows the records table to
 * one kind of record.
 */
export async function lookupExternalIds(
  db: Executor,
  table: ExternalTable,
  workspaceId: string,
  externalIds: string[],
  kind?: string,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const part of chunks(externalIds)) {
    let q = db
      .selectFrom(table as 'users')
      .select(['id', 'external_id'])
      .where('workspace_id', '=', workspaceId)
      .where('external_id', 'in', part);
    if (kind !== undefined) q = q.where('kind' as never, '=', kind as never);
    for (const r of await q.execute()) found.set(r.external_id as string, r.id);
  }
  return found;
}

/**
 * Gives the command's SQLite connection a page cache of 1 GB (the server's is 64 MB,
 * src/db/sqlite.ts): a large import's one transaction then keeps the pages it writes instead of
 * spilling them to the WAL and reading them back, and index builds sort in memory
 * (docs/import.md §Speed). Nothing to do on PostgreSQL, whose cache is the server's.
 */
export async function useImportCache(db: Executor): Promise<void> {
  if (isPostgres(db)) return;
  await sql`pragma cache_size = -1048576`.execute(db);
  // The sorts of a bulk load (the value indexes' builds) may use
  // helper threads: the command has the processors to itself meanwhile (docs/import.md §Speed).
  await sql.raw(`pragma threads = ${Math.min(4, availableParallelism())}`).execute(db);
}

/** How an import's pages reach the database file; undefined on PostgreSQL. */
type ImportJournal = 'rollback' | 'wal' | undefined;

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
  const busy = (await sql<{ timeout: number }>`pragma busy_timeout`.execute(db)).rows[0]?.timeout ?? 5000;
  await sql`pragma busy_timeout = 0`.execute(db);
  const alone = await unlessBusy(
    async () => (await sql<{ journal_mode: string }>`pragma journal_mode = delete`.execute(db)).rows[0]?.journal_mode === 'delete',
  );
  await sql.raw(`pragma busy_timeout = ${Math.trunc(busy)}`).execute(db);
  if (alone !== true) return { journal: 'wal', restore: async () => {} };
  await sql`pragma synchronous = full`.execute(db);
  return {
    journal: 'rollback',
    restore: async () => {
      // A process that opened the file meanwhile waited for the import's lock and sets WAL
      // itself once it has it (src/db/sqlite.ts): this switch then gives way to it.
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
