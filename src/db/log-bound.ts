// The SQLite write-ahead log beside a batched import
// (docs/import.md §Sharing the database, The log stays short). SQLite starts the log again from
// its beginning only when a write begins with every frame of it copied into the database and no
// reader on it. Between an import's chunks, a server's writes and everyone's reads that moment
// seldom comes, so the log grows for as long as the import writes, each chunk's pages appended
// again. Past SQLite's auto-checkpoint size every commit then checkpoints, and the connection that
// at last starts the log again truncates the file inside its commit (`journal_size_limit`,
// src/db/sqlite/cached.ts): on a server's connection, a stall of its only thread that grows with
// the file.
import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { withBusyTimeout } from './busy-timeout.ts';
import { isPostgres } from './dialect.ts';
import type { Executor } from './types.ts';

/** The log's size, in bytes, past which the import starts it again. */
export const LOG_BOUND = 64 * 2 ** 20;

/**
 * How long the RESTART checkpoint may wait for the server's write and for readers on the log. It
 * holds the write lock meanwhile, so a long read (a scan) must not hold the server's writes
 * behind it: past this wait the log is copied but not started again, and the next chunk tries
 * again.
 */
const RESTART_WAIT_MS = 50;

/**
 * SQLite: when the log has grown past LOG_BOUND, copies it into the database and has the next
 * write start it from its beginning. Nothing to do on PostgreSQL. Called before a chunk's
 * transaction, never inside one. The copy and the sync of the database file, which take as long
 * as the log is large and as the disk is busy, are a PASSIVE checkpoint's, which takes no write
 * lock: the server's writes go on meanwhile. The RESTART that follows, which holds the write lock,
 * then copies only the frames those writes added.
 */
export async function restartLongLog(db: Executor): Promise<void> {
  if (isPostgres(db)) return;
  const [main] = (await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(db)).rows;
  if (!main?.file || (statSync(`${main.file}-wal`, { throwIfNoEntry: false })?.size ?? 0) <= LOG_BOUND) return;
  await withBusyTimeout(db, RESTART_WAIT_MS, async () => {
    await sql`pragma wal_checkpoint(PASSIVE)`.execute(db);
    await sql`pragma wal_checkpoint(RESTART)`.execute(db);
  });
}
