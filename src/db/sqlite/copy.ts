// A consistent copy of a SQLite database while other processes write to it (`rolodex backup`,
// docs/deploy.md §Backups): SQLite's online backup, page by page, from a read-only connection.
import { backup, DatabaseSync } from 'node:sqlite';
import { BUSY_TIMEOUT_MS } from './settings.ts';

/** Copies the database in `source` into the new file `target`. */
export async function copySqliteDatabase(source: string, target: string): Promise<void> {
  const db = new DatabaseSync(source, { readOnly: true, timeout: BUSY_TIMEOUT_MS });
  try {
    // Every page in one step, in one read transaction: a step of fewer pages lets a write of
    // another connection land before the next step, which starts the backup over, so under a
    // steady stream of writes it never ended. In WAL mode the read blocks no writer.
    await backup(db, target, { rate: 2 ** 31 - 1 });
  } finally {
    db.close();
  }
}
