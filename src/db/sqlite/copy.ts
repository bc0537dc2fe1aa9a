// A consistent copy of a SQLite database while other processes write to it (`rolodex backup`,
// docs/deploy.md §Backups): SQLite's online backup from a read-only connection; and the check
// that a copy is a whole database, and what a file a restore would replace holds (`rolodex restore`).
import { open } from 'node:fs/promises';
import { backup, DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { BUSY_TIMEOUT_MS } from './settings.ts';

/**
 * Copies the database in `source` into the new file `target`, readable by its owner alone: it
 * holds every workspace's data, webhook signing secrets and key hashes, wherever the backup is put
 * (docs/deploy.md §Backups). The file is made so before SQLite writes into it, which keeps its mode.
 */
export async function copySqliteDatabase(source: string, target: string): Promise<void> {
  await (await open(target, 'wx', 0o600)).close();
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

/**
 * Why the file `path` is not a whole SQLite database (not one at all, cut short, damaged), or
 * null when SQLite's quick check finds nothing wrong with it. The file is opened for writing, so
 * that closing it removes the write-ahead log it makes: check a copy, never a live database.
 */
export function sqliteDatabaseFault(path: string): string | null {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path);
    const rows = db.prepare('PRAGMA quick_check(1)').all() as { quick_check: string }[];
    const found = rows[0]?.quick_check;
    if (found !== 'ok') return found ?? 'no answer from its check';
    // An empty file passes the check: a file cut to nothing is an empty database.
    const { n } = db.prepare('SELECT count(*) AS n FROM sqlite_schema').get() as { n: number };
    return n === 0 ? 'it holds no tables' : null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    db?.close();
  }
}

/** What a SQLite file holds: its schema objects, and whether rolodex's migrator made it. */
export type SqliteFileHeld = { names: string[]; rolodex: boolean } | { fault: string };

/**
 * The schema objects (tables, indexes, views, triggers) of the file `path`, read without writing
 * anything: opened immutable, so that SQLite takes no lock and makes no `-wal` or `-shm` beside
 * it, and the file stays as it was byte for byte. Immutable reads only the file itself: for a file
 * no process has open and with no log beside it, which `rolodex restore` checks first. An empty
 * (0-byte) file holds none; one SQLite cannot read as a database is a fault.
 */
export function sqliteFileHeld(path: string): SqliteFileHeld {
  const url = pathToFileURL(path);
  url.searchParams.set('immutable', '1');
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(url, { readOnly: true });
    const rows = db.prepare("SELECT name FROM sqlite_schema ORDER BY type <> 'table', name").all() as { name: string }[];
    const names = rows.map((r) => r.name);
    return { names, rolodex: names.includes('kysely_migration') };
  } catch (err) {
    return { fault: (err as Error).message };
  } finally {
    db?.close();
  }
}
