// What erasure needs of the database beyond deleting rows: on SQLite, the write-ahead log keeps
// copies of the pages a purge rewrote until it is checkpointed and truncated. PostgreSQL needs
// nothing here (docs/trash.md).
import { setTimeout } from 'node:timers/promises';
import { sql } from 'kysely';
import { InputError } from '../lib/errors.ts';
import { withBusyTimeout } from './busy-timeout.ts';
import type { Db } from './types.ts';

/**
 * Copies the SQLite log into the database and truncates it, so that the log keeps no copy of what
 * the purge erased. A reader (a server's, or one of this very process) may hold the log for a
 * moment: tried again every 50 ms for up to five seconds, and an operator is told if it still could
 * not. Each try gives up at once instead of waiting in SQLite's busy handler, which sleeps on this
 * thread: a reader of this process, let go by this thread (a read-slot pin's timer), would be held
 * for the handler's whole timeout.
 */
export async function truncateLog(db: Db): Promise<void> {
  if (db.dialect !== 'sqlite') return;
  const truncated = await withBusyTimeout(db.kysely, 0, async () => {
    for (let i = 0; i < 100; i++) {
      const r = await sql<{ busy: number; log: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(db.kysely);
      const row = r.rows[0];
      if (row && Number(row.busy) === 0 && Number(row.log) === 0) return true;
      await setTimeout(50);
    }
    return false;
  });
  if (truncated) return;
  throw new InputError(
    'the purge is committed, but the write-ahead log could not be truncated while other connections read it; run the purge again when the server is idle',
  );
}
