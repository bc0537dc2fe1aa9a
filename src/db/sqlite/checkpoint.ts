// WAL checkpoints of a serving process, off its event loop (docs/architecture.md §SQLite
// checkpoints). A checkpoint copies the pages the WAL holds into the database file and syncs both
// files. SQLite runs it on the connection whose COMMIT finds the WAL past 1,000 pages, so on the
// event loop, and every request of the process waits behind its copying and syncing; beside a
// batched `rolodex import` most of those pages are the import's, and a server's COMMIT took 30–50
// ms of them. Here the writing connection's automatic checkpoint is off, and a thread of its own
// runs a passive checkpoint (it never waits for readers or writers, and leaves the work to a
// checkpoint already under way in another process) after the commits, at most one per
// INTERVAL_MS. The thread starts with the first commit, so a process that never writes never
// starts it; should it stop, the automatic checkpoint comes back, so the WAL never grows unchecked.
import type { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';

/** The shortest time between two checkpoints of the thread. */
export const INTERVAL_MS = 100;
/** SQLite's default automatic checkpoint, in pages, restored should the thread stop. */
const AUTOMATIC = 1000;
/** A WAL of this many frames, all copied, is truncated, so that the next write starts it again. */
const RESTART_FRAMES = AUTOMATIC;
/**
 * How long the truncation waits for the write lock and for the readers of the WAL, on the thread
 * (a passive checkpoint waits for nothing). Holding the lock, it holds the process's writes,
 * which wait without blocking the event loop (`beginImmediate`, src/db/sqlite/connection.ts).
 */
const TRUNCATE_WAIT_MS = 50;
/** How long closing waits for the thread to close its connection. */
const CLOSE_WAIT_MS = 5000;

// The shared words: commits noted by the process, closing asked, connection closed by the thread,
// truncation under way.
const COMMITS = 0;
const CLOSING = 1;
const CLOSED = 2;
const TRUNCATING = 3;

// The thread waits on the shared memory rather than on messages, so an idle process has no timer
// waking it. It is plain JavaScript: a thread of TypeScript would load Node's type stripper too.
const THREAD = `
const { workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const state = new Int32Array(workerData.shared);
let db;
try {
  db = new DatabaseSync(workerData.file, { timeout: ${TRUNCATE_WAIT_MS} });
  const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const truncate = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)');
  let seen = 0;
  while (Atomics.load(state, ${CLOSING}) === 0) {
    Atomics.wait(state, ${COMMITS}, seen);
    if (Atomics.load(state, ${CLOSING}) !== 0) break;
    seen = Atomics.load(state, ${COMMITS});
    try {
      const done = passive.get();
      if (done.log >= ${RESTART_FRAMES} && done.checkpointed === done.log) {
        Atomics.store(state, ${TRUNCATING}, 1);
        try { truncate.get(); } finally { Atomics.store(state, ${TRUNCATING}, 0); }
      }
    } catch {}
    Atomics.wait(state, ${CLOSING}, 0, ${INTERVAL_MS});
  }
} finally {
  try { db?.close(); } finally {
    Atomics.store(state, ${CLOSED}, 1);
    Atomics.notify(state, ${CLOSED});
  }
}
`;

export class Checkpoints {
  readonly #file: string;
  readonly #connection: () => DatabaseSync | undefined;
  readonly #state = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
  #worker: Worker | undefined;
  #stopped = false;
  #exited = false;

  /** `connection` is the process's writing connection, whose automatic checkpoint the thread replaces. */
  constructor(file: string, connection: () => DatabaseSync | undefined) {
    this.#file = file;
    this.#connection = connection;
  }

  /** Notes a COMMIT of the writing connection: the thread checkpoints after it. */
  committed(): void {
    if (this.#stopped) return;
    if (!this.#worker) this.#start();
    Atomics.add(this.#state, COMMITS, 1);
    Atomics.notify(this.#state, COMMITS);
  }

  /**
   * Before the writing connection begins a transaction: while the thread truncates the WAL (or
   * waits to), the write waits for it, without blocking the event loop, so that under writes one
   * right after the other the thread finds the lock free between two of them.
   */
  beforeWrite(): Promise<void> | undefined {
    return Atomics.load(this.#state, TRUNCATING) === 0 ? undefined : this.#truncated();
  }

  async #truncated(): Promise<void> {
    while (Atomics.load(this.#state, TRUNCATING) !== 0 && !this.#stopped) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  #start(): void {
    const worker = new Worker(THREAD, { eval: true, workerData: { file: this.#file, shared: this.#state.buffer } });
    worker.unref();
    this.#connection()?.exec('PRAGMA wal_autocheckpoint = 0');
    const stopped = () => {
      if (this.#stopped) return;
      this.#stopped = true;
      const raw = this.#connection();
      if (raw?.isOpen) raw.exec(`PRAGMA wal_autocheckpoint = ${AUTOMATIC}`);
    };
    worker.on('error', stopped);
    worker.on('exit', () => {
      this.#exited = true;
      stopped();
    });
    this.#worker = worker;
  }

  /**
   * Stops the thread, once it has closed its connection: the process's own connections close
   * after it, and the files may be removed then. Synchronous, as closing the connections is.
   */
  close(): void {
    const worker = this.#worker;
    this.#stopped = true;
    if (!worker || this.#exited) return;
    Atomics.store(this.#state, CLOSING, 1);
    Atomics.notify(this.#state, COMMITS);
    Atomics.notify(this.#state, CLOSING);
    if (Atomics.wait(this.#state, CLOSED, 0, CLOSE_WAIT_MS) === 'timed-out') void worker.terminate();
  }
}
