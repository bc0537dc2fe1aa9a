// A read of many statements, over as long as it takes, that sees the database as it was at its
// start: what was committed before it, and nothing committed after (docs/import.md §One state of
// the workspace). Writers go on meanwhile; the read waits for none of them and none waits for it.
// - PostgreSQL: a `repeatable read`, `read only` transaction; its one snapshot is taken by its
//   first statement.
// - SQLite: a read transaction on a read-only connection of its own, opened beside the handle's
//   (a transaction of the handle itself is a BEGIN IMMEDIATE, which would hold every writer back).
//   In WAL mode a reader sees the last commit before its first read until it ends. While it holds
//   that read, the log cannot start again from its beginning and grows with every write; once it
//   ends, the log is copied into the database here if it has grown past LOG_BOUND, so that the
//   copy falls on this process and not inside a server's next commit.
import { DatabaseSync } from 'node:sqlite';
import { Kysely, sql, SqliteDialect } from 'kysely';
import { isPostgres } from './dialect.ts';
import { restartLongLog } from './log-bound.ts';
import { PIN_READ } from './sqlite/pin.ts';
import { CachedDatabase } from './sqlite/cached.ts';
import { BUSY_TIMEOUT_MS } from './sqlite/settings.ts';
import type { Database } from './types.ts';
import { snapshotRead } from './write.ts';

/**
 * Runs `fn` with a handle whose every read sees the state of `db` when `fn` began. `fn` only
 * reads: a write through the handle fails.
 */
export async function readSnapshot<T>(db: Kysely<Database>, fn: (snapshot: Kysely<Database>) => Promise<T>): Promise<T> {
  if (isPostgres(db)) return snapshotRead(db, fn, { readOnly: true });
  const [main] = (await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(db)).rows;
  if (!main?.file) throw new Error('readSnapshot: the SQLite database has no file');
  const connection = new CachedDatabase(new DatabaseSync(main.file, { readOnly: true, timeout: BUSY_TIMEOUT_MS }));
  const snapshot = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  try {
    connection.raw.exec('BEGIN');
    // A read transaction takes its snapshot at its first read, not at BEGIN.
    connection.raw.prepare(PIN_READ).all();
    return await fn(snapshot);
  } finally {
    if (connection.raw.isOpen && connection.raw.isTransaction) connection.raw.exec('COMMIT');
    await snapshot.destroy();
    connection.close();
    await restartLongLog(db);
  }
}
