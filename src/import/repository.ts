// The one query the import runs for every kind (server ids by externalId), and its session setup.
import { availableParallelism } from 'node:os';
import { sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import { isPostgres } from '../db/rank-def.ts';
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
