// The thread of src/db/sqlite/scan.ts: a read-only connection that runs the scans it is sent, one
// after the other, each its own snapshot of the last commit.
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { CachedDatabase } from './cached.ts';
import { BUSY_TIMEOUT_MS } from './settings.ts';
import type { ScanError, ScanReply, ScanRequest } from './scan.ts';

const port = parentPort!;
const db = new CachedDatabase(new DatabaseSync((workerData as { file: string }).file, { readOnly: true, timeout: BUSY_TIMEOUT_MS }));

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
