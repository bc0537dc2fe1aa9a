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
import { causeOf } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import { dropPendingEntry } from '../knowledge/repository.ts';
import * as repo from '../files/repository.ts';
import { type FilesEnv, type FilesSystemCtx, releaseAt } from '../files/service.ts';
import { type Db, write } from '../db/index.ts';
import { purgeExpiredTrash } from '../trash/purge.ts';

const BATCH = 200;
const MAX_BATCHES = 20;
// A put's temp file is written to as long as its bytes arrive, and an idle connection is closed
// after a minute: one untouched for an hour belongs to a process that died. The walk over the
// blob directory is not free, so it runs at start and then hourly, not every round.
const STALE_TEMP_MS = 3600_000;

export interface SweepResult {
  expired: number;
  blobsDeleted: number;
  /** Garbage blobs the store refused to delete: their rows stay, and the next sweep tries them again. */
  blobsFailed: number;
  idempotencyKeysPurged: number;
  tempFilesRemoved: number;
  trashPurged: number;
  eventsPurged: number;
}

/**
 * One round at ctx.now; `temp` also walks the blob store for stale temp files; `trashRetentionDays`
 * (TRASH_RETENTION_DAYS) purges older trash; `eventRetentionDays` (EVENT_RETENTION_DAYS, 0: forever)
 * purges older events no webhook delivery waits for and ENRICHMENT=on-create has read. A garbage
 * blob the store refuses to delete is logged on `log`, unless it is in `failing` (the blobs refused
 * by the sweep before, which the caller keeps from round to round and this round replaces).
 */
export async function sweepOnce(
  ctx: FilesSystemCtx,
  input: { temp?: boolean; trashRetentionDays?: number; eventRetentionDays?: number; log?: Logger; failing?: Set<string> } = {},
): Promise<SweepResult> {
  const result: SweepResult = {
    expired: 0,
    blobsDeleted: 0,
    blobsFailed: 0,
    idempotencyKeysPurged: 0,
    tempFilesRemoved: 0,
    trashPurged: 0,
    eventsPurged: 0,
  };
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
  await deleteGarbage(ctx, result, input);
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

/**
 * Deletes the due garbage blobs and their rows (docs/files.md §Sweeper). One the store refuses (a
 * permission, an S3 error) keeps its row and is passed by: the rows after it are read from past it,
 * so that each is tried once a round and the others are still deleted; the next round tries it
 * again. Its failure is logged when it begins, not again each round while it lasts.
 */
async function deleteGarbage(ctx: FilesSystemCtx, result: SweepResult, input: { log?: Logger; failing?: Set<string> }): Promise<void> {
  const { db, now, files: env } = ctx;
  const failed = new Set<string>();
  let after: repo.GarbageRow | undefined;
  for (let b = 0; b < MAX_BATCHES; b++) {
    const due = await repo.dueGarbage(db, isoNow(now), BATCH, after);
    for (const g of due) {
      try {
        await env.blobs.delete(g.blob_key);
      } catch (err) {
        failed.add(g.blob_key);
        result.blobsFailed++;
        if (!input.failing?.has(g.blob_key))
          input.log?.warn({ blobKey: g.blob_key, ...causeOf(err, { named: true }) }, 'garbage blob not deleted; the next sweep tries again');
        continue;
      }
      await repo.removeGarbage(db, g.blob_key, g.not_before);
      result.blobsDeleted++;
    }
    after = due.at(-1);
    if (due.length < BATCH) break;
  }
  if (input.failing) {
    input.failing.clear();
    for (const key of failed) input.failing.add(key);
  }
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
  const failing = new Set<string>();
  const tick = () => {
    if (running || stopped) return;
    const now = Date.now();
    const temp = now - lastTemp >= STALE_TEMP_MS;
    if (temp) lastTemp = now;
    running = sweepOnce(
      { db: deps.db.kysely, now, files: deps.files },
      { temp, trashRetentionDays: deps.trashRetentionDays ?? 0, eventRetentionDays: deps.eventRetentionDays ?? 0, log: logger, failing },
    )
      .then((r) => {
        if (r.expired || r.blobsDeleted || r.blobsFailed || r.idempotencyKeysPurged || r.tempFilesRemoved || r.trashPurged || r.eventsPurged)
          logger.info(r, 'sweep');
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
