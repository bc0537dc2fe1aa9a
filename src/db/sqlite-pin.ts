// In WAL mode SQLite starts and ends every read transaction by locking a slot of the WAL index:
// two fcntl() system calls per read, unless another connection of the same process already holds
// that slot, in which case SQLite only counts (its unix VFS keeps per-process lock counts). Where a
// system call costs microseconds those two calls are most of a small indexed read: 3.4 µs against
// 1.4 µs for a primary-key read here, and 2 of the 4 system calls of a GET /v1/lists/{id}.
//
// The pin is one more read-only connection that keeps a read transaction open on the slot of the
// latest commit, so that the other reads of this process find their slot held. It moves forward
// every REFRESH_MS; a read that starts after a newer commit (of this or any other process) needs a
// newer slot and locks it itself, as it would without the pin. Every read still takes its own
// snapshot of the latest commit, so what reads see does not change; the pin only holds checkpoints
// back (and with them the reuse of the WAL file) for at most REFRESH_MS.
import { DatabaseSync, type StatementSync } from 'node:sqlite';

const REFRESH_MS = 50;

export class ReadSlotPin {
  readonly #db: DatabaseSync;
  readonly #read: StatementSync;
  readonly #timer: NodeJS.Timeout;

  constructor(file: string) {
    this.#db = new DatabaseSync(file, { readOnly: true, timeout: 5000 });
    // A read transaction takes its slot at its first read, not at BEGIN.
    this.#read = this.#db.prepare('SELECT 1 FROM sqlite_master LIMIT 1');
    this.#hold();
    this.#timer = setInterval(() => this.#hold(), REFRESH_MS).unref();
  }

  #hold(): void {
    try {
      if (this.#db.isTransaction) this.#db.exec('COMMIT');
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
