// A consistent copy of a SQLite database while other processes write to it (`rolodex backup`,
// docs/deploy.md §Backups): SQLite's online backup, page by page, from a read-only connection.
import { backup, DatabaseSync } from 'node:sqlite';
import { BUSY_TIMEOUT_MS } from './settings.ts';

/** Copies the database in `source` into the new file `target`. */
export async function copySqliteDatabase(source: string, target: string): Promise<void> {
  const db = new DatabaseSync(source, { readOnly: true, timeout: BUSY_TIMEOUT_MS });
  try {
    await backup(db, target);
  } finally {
    db.close();
  }
}
