// Scans on SQLite (docs/design.md §Database, "Scans"): node:sqlite runs a statement on the thread
// that calls it, so a scan of hundreds of milliseconds on the main thread held every request of
// the process, point reads included, until it ended; and Kysely lets one statement at a time have
// SQLite's connection, so a scan sent through it, even to another thread, held every statement
// behind it. A scan outside a transaction goes instead (src/db/scan.ts) straight to a thread of
// its own with a read-only connection, and the main thread serves other requests meanwhile.
// Scans take turns there, in the order sent. The thread starts with the first scan, so a process
// that never scans (a command) never starts it; if it dies, the next scan starts another.
import { Worker } from 'node:worker_threads';

export interface ScanRequest {
  id: number;
  sql: string;
  params: readonly unknown[];
}

/** A scan's error, as node:sqlite gave it on the thread. */
export interface ScanError {
  message: string;
  name: string;
  code?: unknown;
  errcode?: unknown;
  errstr?: unknown;
}

export type ScanReply = { id: number; rows: unknown[] } | { id: number; error: ScanError };

export class ScanThread {
  readonly #file: string;
  #worker: Worker | undefined;
  readonly #waiting = new Map<number, { resolve: (rows: unknown[]) => void; reject: (err: unknown) => void }>();
  #next = 1;

  constructor(file: string) {
    this.#file = file;
  }

  #start(): Worker {
    const worker = new Worker(new URL('./scan-thread.ts', import.meta.url), { workerData: { file: this.#file } });
    // Only a scan waiting for its answer keeps the process alive for it.
    worker.unref();
    worker.on('message', (m: ScanReply) => {
      const w = this.#waiting.get(m.id);
      this.#waiting.delete(m.id);
      if (this.#waiting.size === 0) worker.unref();
      if ('rows' in m) w?.resolve(m.rows);
      else w?.reject(Object.assign(new Error(m.error.message), m.error));
    });
    const fail = (err: unknown) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      for (const w of this.#waiting.values()) w.reject(err);
      this.#waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the SQLite scan thread exited')));
    return worker;
  }

  /** The rows of `sql`, read on the scan thread. */
  all<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    const worker = (this.#worker ??= this.#start());
    const id = this.#next++;
    worker.ref();
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve: (rows) => resolve(rows as R[]), reject });
      worker.postMessage({ id, sql, params } satisfies ScanRequest);
    });
  }

  /** Stops the thread; a scan still waiting fails. */
  close(): void {
    const worker = this.#worker;
    this.#worker = undefined;
    for (const w of this.#waiting.values()) w.reject(new Error('the database was closed'));
    this.#waiting.clear();
    worker?.postMessage('close');
  }
}
