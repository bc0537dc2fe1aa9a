// The thread of src/db/sqlite/scan.ts: a read-only connection that runs the scans it is sent, one
// after the other, each its own snapshot of the last commit.
import { DatabaseSync } from 'node:sqlite';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { CachedDatabase } from './cached.ts';
import { BUSY_TIMEOUT_MS } from './settings.ts';
import type { ScanError, ScanReply, ScanRequest } from './scan.ts';

/** Runs the scans `port` sends on a read-only connection of its own to `file`, until 'close'. */
function serve(port: MessagePort, file: string): void {
  const db = new CachedDatabase(new DatabaseSync(file, { readOnly: true, timeout: BUSY_TIMEOUT_MS }));
  port.on('message', (m: ScanRequest | 'close') => {
    if (m === 'close') {
      db.close();
      port.close();
      return;
    }
    try {
      port.postMessage({ id: m.id, rows: db.all(m.sql, m.params) } satisfies ScanReply);
    } catch (err) {
      const e = err as Partial<ScanError>;
      const error = { message: String(e?.message ?? err), name: String(e?.name ?? 'Error'), code: e?.code, errcode: e?.errcode, errstr: e?.errstr };
      port.postMessage({ id: m.id, error } satisfies ScanReply);
    }
  });
}

// Only as a thread's entry: importing this module (the compile cache's warm-up, bin/compile-cache.js)
// runs nothing.
if (import.meta.main) serve(parentPort!, (workerData as { file: string }).file);
