// The background sweeper (docs/design.md §Files): persists EXPIRED for upload sessions past their
// deadline, deletes the bytes nothing points to any more, purges old idempotency keys and the trash
// older than TRASH_RETENTION_DAYS (docs/trash.md). Started
// by the server entry point, never at import; every instance may run one, since each step is a
// compare-and-set or an idempotent delete.
import type { Logger } from 'pino';
import { purgeEvents } from '../changes/repository.ts';
import { staleBefore } from '../enrichment/creation.ts';
import { liveCursorSeq } from '../enrichment/repository.ts';
import { purgeExpiredKeys } from '../idempotency/repository.ts';
import { isoNow } from '../lib/ids.ts';
import { dropPendingEntry } from '../knowledge/repository.ts';
import * as repo from '../files/repository.ts';
import { type FilesEnv, type FilesSystemCtx, releaseAt } from '../files/service.ts';
import { type Db, write } from '../db/index.ts';
import { purgeExpiredTrash } from '../trash/restore.ts';

const BATCH = 200;
const MAX_BATCHES = 20;
// A put's temp file is written to as long as its bytes arrive, and an idle connection is closed
// after a minute: one untouched for an hour belongs to a process that died. The walk over the
// blob directory is not free, so it runs at start and then hourly, not every round.
const STALE_TEMP_MS = 3600_000;

export interface SweepResult {
  expired: number;
  blobsDeleted: number;
  idempotencyKeysPurged: number;
  tempFilesRemoved: number;
  trashPurged: number;
  eventsPurged: number;
}

/**
 * One round at ctx.now; `temp` also walks the blob store for stale temp files; `trashRetentionDays`
 * (TRASH_RETENTION_DAYS) purges older trash; `eventRetentionDays` (EVENT_RETENTION_DAYS, 0: forever)
 * purges older events no webhook delivery waits for and ENRICHMENT=on-create has read.
 */
export async function sweepOnce(
  ctx: FilesSystemCtx,
  input: { temp?: boolean; trashRetentionDays?: number; eventRetentionDays?: number } = {},
): Promise<SweepResult> {
  const result: SweepResult = { expired: 0, blobsDeleted: 0, idempotencyKeysPurged: 0, tempFilesRemoved: 0, trashPurged: 0, eventsPurged: 0 };
  const { db, now, files: env } = ctx;
  for (let b = 0; b < MAX_BATCHES; b++) {
    const rows = await repo.overdueSessions(db, isoNow(now), BATCH);
    for (const row of rows) {
      const moved = await write(db, async (tx) => {
        if (!(await repo.transition(tx, row.id, { blobKey: row.blob_key }, { status: 'EXPIRED', expires_at: null }))) return false;
        await dropPendingEntry(tx, row.id);
        if (row.blob_key) await repo.addGarbage(tx, row.blob_key, releaseAt(env, row, now));
        return true;
      });
      if (moved) result.expired++;
    }
    if (rows.length < BATCH) break;
  }
  for (let b = 0; b < MAX_BATCHES; b++) {
    const due = await repo.dueGarbage(db, isoNow(now), BATCH);
    for (const g of due) {
      await env.blobs.delete(g.blob_key);
      await repo.removeGarbage(db, g.blob_key, g.not_before);
      result.blobsDeleted++;
    }
    if (due.length < BATCH) break;
  }
  result.idempotencyKeysPurged = await purgeExpiredKeys(db, now);
  const days = input.eventRetentionDays ?? 0;
  if (days > 0) {
    const before = isoNow(now - days * 86_400_000);
    // The events ENRICHMENT=on-create has not read yet stay while a runner keeps its cursor; a stale
    // cursor has none left, and the next on-create server restarts it at the log's end
    // (docs/enrichment.md §Runs).
    const unread = await liveCursorSeq(db, staleBefore(now));
    for (let b = 0; b < MAX_BATCHES; b++) {
      const n = await purgeEvents(db, before, 1000, unread);
      result.eventsPurged += n;
      if (n < 1000) break;
    }
  }
  if (input.temp) result.tempFilesRemoved = await env.blobs.removeStaleTemp(now - STALE_TEMP_MS);
  if (input.trashRetentionDays) result.trashPurged = await purgeExpiredTrash(db, now, input.trashRetentionDays * 86_400_000, BATCH * MAX_BATCHES);
  return result;
}

export interface Sweeper {
  stop(): Promise<void>;
}

export function startSweeper(
  deps: { db: Db; files: FilesEnv; trashRetentionDays?: number; eventRetentionDays?: number },
  logger: Logger,
  intervalMs: number,
): Sweeper {
  let running: Promise<void> | null = null;
  let stopped = false;
  let lastTemp = 0;
  const tick = () => {
    if (running || stopped) return;
    const now = Date.now();
    const temp = now - lastTemp >= STALE_TEMP_MS;
    if (temp) lastTemp = now;
    running = sweepOnce(
      { db: deps.db.kysely, now, files: deps.files },
      { temp, trashRetentionDays: deps.trashRetentionDays ?? 0, eventRetentionDays: deps.eventRetentionDays ?? 0 },
    )
      .then((r) => {
        if (r.expired || r.blobsDeleted || r.idempotencyKeysPurged || r.tempFilesRemoved || r.trashPurged || r.eventsPurged) logger.info(r, 'sweep');
      })
      .catch((err: unknown) => logger.warn({ err }, 'sweep failed; next round retries'))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
