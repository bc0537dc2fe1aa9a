// A WAL checkpoint copies the pages written since the last one into the database file and syncs
// it: tens of milliseconds, and on the connection whose commit crosses the WAL's threshold
// (SQLite's automatic checkpoint), so on the event loop, and every request of the process waits
// behind it (docs/performance.md §Mixed load). A process that serves requests turns the automatic
// checkpoint off on its connection and runs passive checkpoints on a thread of its own, with its
// own connection, every INTERVAL_MS instead: what they do is the same, where they wait is not.
// Should the thread stop, the automatic checkpoint comes back, so the WAL never grows unchecked.
import { Worker } from 'node:worker_threads';
import type { DatabaseSync } from 'node:sqlite';

const INTERVAL_MS = 200;

// The thread: a passive checkpoint never waits for readers or writers; one that finds another
// checkpoint under way (another process's) leaves the work to it.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file, { timeout: 0 });
const step = () => { try { db.exec('PRAGMA wal_checkpoint(PASSIVE)'); } catch {} };
const timer = setInterval(step, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); step(); db.close(); parentPort.close(); });
`;

export class Checkpointer {
  readonly #worker: Worker;

  constructor(file: string, main: DatabaseSync) {
    main.exec('PRAGMA wal_autocheckpoint = 0');
    this.#worker = new Worker(THREAD, { eval: true, workerData: { file, intervalMs: INTERVAL_MS } });
    this.#worker.unref();
    this.#worker.on('exit', () => {
      if (main.isOpen) main.exec('PRAGMA wal_autocheckpoint = 1000');
    });
  }

  /** Stops the thread after a last checkpoint (it closes its own connection). */
  close(): void {
    this.#worker.postMessage('close');
  }
}
