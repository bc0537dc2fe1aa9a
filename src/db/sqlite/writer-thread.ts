// The thread that holds the connection of src/db/sqlite/writer.ts: it runs the statements it is
// sent, in the order sent. A statement sent without waiting for it (id 0: a deferred one,
// src/db/pipeline.ts) is acknowledged once run; if it fails, its error is the answer of the next
// statement awaited, and every statement until then is skipped, as the transaction is lost anyway.
// ROLLBACK always runs.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { collectFull } from '../../lib/gc.ts';
import { openConnection } from './cached.ts';

export interface Request {
  /** 0 for a statement nobody waits for. */
  id: number;
  /** Deferred, but its rows are wanted (deferredRows): they come back under `id` once it ran. */
  queued?: boolean;
  sql: string;
  params: readonly unknown[];
}

export type Reply =
  | { id: number; rows: unknown[]; changes?: number; lastInsertRowid?: number }
  | { id: number; error: ThreadError }
  /** A deferred statement ran (or was skipped). */
  | { done: true };

export interface ThreadError {
  message: string;
  name: string;
  code?: unknown;
  errcode?: unknown;
  errstr?: unknown;
}

function describe(err: unknown): ThreadError {
  const e = err as Partial<ThreadError>;
  return { message: String(e?.message ?? err), name: String(e?.name ?? 'Error'), code: e?.code, errcode: e?.errcode, errstr: e?.errstr };
}

/**
 * Parameters above which a statement's values are let go once it ran. node:sqlite binds text as
 * a copy that SQLite keeps until the statement is bound again, and the connection caches its
 * statements (src/db/sqlite/cached.ts): each multi-row insert of an import kept its last rows'
 * values, up to a few MB for a statement of trigram packs or events, for as long as it stayed in
 * the cache (docs/import.md §Memory). Binding nulls (`iterate`, which binds without running)
 * frees them.
 */
const RELEASE_PARAMS = 64;

function release(stmt: { iterate(params: readonly unknown[]): unknown }, params: readonly unknown[]): void {
  if (params.length > RELEASE_PARAMS) stmt.iterate(new Array<null>(params.length).fill(null));
}

/** Serves the statements `port` sends on a connection of its own to `file`, until 'close'. */
function serve(port: MessagePort, file: string): void {
  // Its statement cache collects what it evicts: an import's chunks make statements of many
  // texts (docs/import.md §Memory).
  const db = openConnection(file, { collect: collectFull });
  let failed: ThreadError | undefined;

  port.on('message', (m: Request | 'close') => {
    if (m === 'close') {
      db.close();
      port.close();
      return;
    }
    const rollback = /^\s*rollback\b/i.test(m.sql);
    const deferred = m.id === 0 || m.queued === true;
    if (failed !== undefined && !rollback) {
      port.postMessage(deferred ? { done: true } : { id: m.id, error: failed });
      return;
    }
    if (rollback) failed = undefined;
    try {
      const stmt = db.prepare(m.sql);
      let reply: Reply;
      if (stmt.reader) reply = { id: m.id, rows: stmt.all(m.params) };
      else {
        const r = stmt.run(m.params);
        reply = { id: m.id, rows: [], changes: Number(r.changes), lastInsertRowid: Number(r.lastInsertRowid) };
      }
      release(stmt, m.params);
      port.postMessage(m.id === 0 ? { done: true } : reply);
    } catch (err) {
      if (!deferred) port.postMessage({ id: m.id, error: describe(err) });
      else {
        failed = describe(err);
        port.postMessage({ done: true });
      }
    }
  });
  port.postMessage({ id: -1, rows: [] });
}

// Only as a thread's entry: importing this module (the compile cache's warm-up, bin/compile-cache.js)
// runs nothing.
if (import.meta.main) serve(parentPort!, (workerData as { file: string }).file);
