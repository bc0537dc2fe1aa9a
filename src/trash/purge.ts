// Purging the trash (docs/trash.md §Purge), for the operator and the sweeper: a purge erases the
// entry and every row that still names the record. It runs in the caller's transaction.
import { eraseChangesOf } from '../changes/repository.ts';
import { type Executor, type Tx, write } from '../db/index.ts';
import { eraseRunsOf } from '../enrichment/repository.ts';
import { eraseAnswersHolding } from '../idempotency/repository.ts';
import { operatorCtx, type WriteCtx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import { repointHeld } from '../merges/repository.ts';
import * as repo from './repository.ts';
import type { TrashPayload } from './service.ts';

export interface Purged {
  records: number;
  values: number;
  valueIndexRows: number;
  relationships: number;
  listMemberships: number;
  storedResponses: number;
  /** Events that named the record, and its field history rows (docs/events.md, docs/history.md). */
  events: number;
  historyRows: number;
  /** Its enrichment runs, ended or in flight (docs/enrichment.md). */
  enrichmentRuns: number;
}

/** Erases one entry and every row still naming its record; adds what it removed to `into`. */
async function purgeEntry(ctx: WriteCtx, entry: repo.TrashRow, into: Purged): Promise<void> {
  const payload = JSON.parse(entry.payload) as TrashPayload;
  // A merged record's id still held by another entry (taken out of the live tables beside the
  // merge, after it renamed the held rows) stands for its primary, as a restore reads it: it is
  // renamed, not erased, so that the link survives the duplicate (docs/trash.md §Purge).
  if (entry.merged_into !== null) await repointHeld(ctx.db, entry.id, entry.merged_into);
  const held = await repo.eraseHeld(ctx.db, entry.id);
  if (payload.meeting) await repo.releaseTranscript(ctx.db, entry.id);
  into.records++;
  into.values += payload.record ? Object.keys(JSON.parse(payload.record.fields) as object).length : payload.meeting ? 8 : payload.list ? 2 : 0;
  into.valueIndexRows += payload.indexRows ?? 0;
  into.relationships += held.links;
  into.listMemberships += held.members;
  // Stored idempotent answers that mention it (a create's, an update's, a delete's).
  into.storedResponses += await eraseAnswersHolding(ctx.db, entry.workspace_id, entry.id);
  // The runs go before the events: on PostgreSQL the delete waits for a run's end being written
  // (its row locked), so that the event of that end is committed, and erased, by the next statement.
  into.enrichmentRuns += await eraseRunsOf(ctx.db, entry.workspace_id, entry.id);
  const changes = await eraseChangesOf(ctx.db, entry.workspace_id, entry.id);
  into.events += changes.events;
  into.historyRows += changes.historyRows;
  await repo.deleteTrash(ctx.db, entry.id);
}

/** Purges the named entries, or every entry deleted more than `olderThanMs` ago (all when 0). */
export async function purge(ctx: WriteCtx, input: { ids?: readonly string[]; olderThanMs?: number }): Promise<Purged> {
  const out: Purged = {
    records: 0,
    values: 0,
    valueIndexRows: 0,
    relationships: 0,
    listMemberships: 0,
    storedResponses: 0,
    events: 0,
    historyRows: 0,
    enrichmentRuns: 0,
  };
  const entries: repo.TrashRow[] = [];
  if (input.ids && input.ids.length > 0) {
    for (const id of new Set(input.ids)) {
      const entry = await repo.findTrashLocked(ctx.db, ctx.actor.workspaceId, id);
      if (!entry) throw notFound('trashed record', id);
      entries.push(entry);
    }
  } else {
    const before = input.olderThanMs === undefined ? undefined : isoNow(ctx.now - input.olderThanMs);
    entries.push(...(await repo.listTrash(ctx.db, ctx.actor.workspaceId, before === undefined ? { locked: true } : { before, locked: true })));
  }
  for (const entry of entries) await purgeEntry(ctx, entry, out);
  return out;
}

/**
 * The sweeper's retention: purges entries of any workspace deleted more than `ageMs` before `now`,
 * at most `limit`, each in a transaction of its own. Returns how many.
 */
export async function purgeExpiredTrash(db: Executor, now: number, ageMs: number, limit: number): Promise<number> {
  const due = await repo.expiredTrash(db, isoNow(now - ageMs), limit);
  let n = 0;
  for (const entry of due) {
    // Another process may have purged or restored it meanwhile: then there is nothing to do. A
    // purge beside a restore of a linked entry takes their locks in the other order, and
    // PostgreSQL cancels one of them (docs/trash.md §Restore): the purge changes nothing outside
    // its transaction, so it runs again, as `rolodex trash purge` does (docs/design.md §Database).
    const once = (tx: Tx) => purge(operatorCtx(tx, entry.workspace_id, { now }), { ids: [entry.id] });
    const done = await write(db, once, { rerun: () => {} }).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'resource_not_found') return undefined;
      throw err;
    });
    if (done) n++;
  }
  return n;
}
