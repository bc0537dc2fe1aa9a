// In WAL mode SQLite starts and ends every read transaction by locking a slot of the WAL index:
// two fcntl() system calls per read, unless another connection of the same process already holds
// that slot, in which case SQLite only counts (its unix VFS keeps per-process lock counts). Where a
// system call costs microseconds those two calls are most of a small indexed read, and half the
// system calls of a GET /v1/lists/{id} (docs/performance.md §The SQLite read-slot pin).
//
// The pin is one more read-only connection that keeps a read transaction open on the slot of the
// latest commit, so that the other reads of this process find their slot held. It moves forward
// every REFRESH_MS; a read that starts after a newer commit (of this or any other process) needs a
// newer slot and locks it itself, as it would without the pin. Every read still takes its own
// snapshot of the latest commit, so what reads see does not change; the pin only holds checkpoints
// back for at most REFRESH_MS.
//
// It must not hold back the reuse of the WAL file, though. SQLite starts writing the WAL from its
// beginning again only when a write begins after a checkpoint has copied every frame and no other
// connection holds a read slot; under steady writes a pin that moves every REFRESH_MS always holds
// one (a newer commit has come meanwhile), so a pin that never let go would let the WAL grow
// without end, and every commit past the auto-checkpoint size would run a checkpoint with its
// syncs (docs/performance.md §Record reads and writes). So the
// pin lets go while the WAL file is larger than WAL_LIMIT, the size the writer connection truncates
// it to when it restarts (`journal_size_limit`, src/db/sqlite/cached.ts): the next checkpoint completes,
// the next write restarts the WAL and truncates the file, and the pin takes its slot again.
import { statSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { BUSY_TIMEOUT_MS } from './settings.ts';

const REFRESH_MS = 50;
/** About SQLite's auto-checkpoint size (1,000 pages of 4 KiB, with frame headers). */
export const WAL_LIMIT = 4 * 1024 * 1024;

/** The pin's own read, run on its timer for no request (a test's statement spy leaves it out). */
export const PIN_READ = 'SELECT 1 FROM sqlite_master LIMIT 1';

export class ReadSlotPin {
  readonly #db: DatabaseSync;
  readonly #read: StatementSync;
  readonly #timer: NodeJS.Timeout;
  readonly #wal: string;

  constructor(file: string) {
    this.#wal = `${file}-wal`;
    this.#db = new DatabaseSync(file, { readOnly: true, timeout: BUSY_TIMEOUT_MS });
    // A read transaction takes its slot at its first read, not at BEGIN.
    this.#read = this.#db.prepare(PIN_READ);
    this.#hold();
    this.#timer = setInterval(() => this.#hold(), REFRESH_MS).unref();
  }

  #hold(): void {
    try {
      if (this.#db.isTransaction) this.#db.exec('COMMIT');
      if ((statSync(this.#wal, { throwIfNoEntry: false })?.size ?? 0) > WAL_LIMIT) return;
      this.#db.exec('BEGIN');
      this.#read.all();
    } catch {
      // Busy (a WAL recovery in another process, say): reads only lose the shortcut until the next try.
    }
  }

  close(): void {
    clearInterval(this.#timer);
    if (!this.#db.isOpen) return;
    if (this.#db.isTransaction) this.#db.exec('COMMIT');
    this.#db.close();
  }
}
