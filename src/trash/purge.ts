// Purging the trash (docs/trash.md §Purge), for the operator and the sweeper: a purge erases the
// entry and every row that still names the record. It runs in the caller's transaction.
import { eraseChangesOf } from '../changes/repository.ts';
import { chunks, type Executor, fewTexts, inBackground, type Tx, write } from '../db/index.ts';
import { eraseRunsOf } from '../enrichment/repository.ts';
import { eraseAnswersHolding } from '../idempotency/repository.ts';
import { operatorCtx, type WriteCtx } from '../lib/context.ts';
import { notFound } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import { repointHeld } from '../merges/repository.ts';
import * as records from '../records/repository.ts';
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

const nothing = (): Purged => ({
  records: 0,
  values: 0,
  valueIndexRows: 0,
  relationships: 0,
  listMemberships: 0,
  storedResponses: 0,
  events: 0,
  historyRows: 0,
  enrichmentRuns: 0,
});

/**
 * Where the rows held for each merged entry among `entries` go: to the end of its chain of merges
 * outside the purged entries (A merged into C and C into D, both purged: D), whatever their order.
 * An end among them (a plain entry) takes the rows and erases them as its own; an end neither live
 * nor in the trash (purged earlier) takes none, and they are erased as the merged entry's. The ends
 * are read as a restore reads them, locked against deletion until the purge commits (docs/trash.md
 * §Purge): a delete, purge or merge of one waits, then finds the rows under their new name.
 */
async function heldMoves(ctx: WriteCtx, entries: readonly repo.TrashRow[]): Promise<Map<string, string>> {
  const into = new Map(entries.flatMap((e) => (e.merged_into === null ? [] : [[e.id, e.merged_into] as const])));
  if (into.size === 0) return into;
  const purged = new Set(entries.map((e) => e.id));
  const endOf = (id: string) => {
    const seen = new Set([id]);
    let at = into.get(id)!;
    for (let next = into.get(at); next !== undefined && !seen.has(at); next = into.get(at)) {
      seen.add(at);
      at = next;
    }
    return at;
  };
  const ends = new Map([...into.keys()].map((id) => [id, endOf(id)]));
  const outside = [...new Set(ends.values())].filter((x) => !purged.has(x));
  const live = await records.kindsOf(ctx.db, outside);
  const trashed = await repo.trashEnds(
    ctx.db,
    ctx.actor.workspaceId,
    outside.filter((x) => !live.has(x)),
  );
  return new Map([...ends].filter(([, end]) => purged.has(end) || live.has(end) || trashed.has(end)));
}

/**
 * Erases the entries, all of one workspace, and every row still naming their records. What names
 * them is found for all of them at once: each table is read once, by its index or in one pass over
 * the workspace's rows (the events, the stored answers), whatever the number of entries, so that a
 * purge of many costs a few statements more than a purge of one (docs/trash.md §Purge).
 */
async function purgeEntries(ctx: WriteCtx, entries: readonly repo.TrashRow[]): Promise<Purged> {
  const out = nothing();
  if (entries.length === 0) return out;
  const workspaceId = entries[0]!.workspace_id;
  const ids = entries.map((e) => e.id);
  // A merged record's id still held by another entry (taken out of the live tables beside the
  // merge, after it renamed the held rows) stands for its primary, as a restore reads it: it is
  // renamed, not erased, so that the link survives the duplicate (docs/trash.md §Purge).
  const moves = await heldMoves(ctx, entries);
  if (moves.size > 0) await repointHeld(ctx.db, moves);
  // The entries merged into a merged entry purged here (A into C, C into D, C purged alone) are
  // pointed at the end of its chain, which outlives it: a later purge or restore that reads them
  // follows the chain to D, not to a record gone (docs/trash.md §Purge). An end purged here or
  // before is no end, and they are left as they are.
  const purged = new Set(ids);
  const outlived = new Map([...moves].filter(([, end]) => !purged.has(end)));
  if (outlived.size > 0) await repo.repointMerged(ctx.db, workspaceId, outlived);
  const held = await repo.eraseHeld(ctx.db, ids);
  const meetings: string[] = [];
  for (const e of entries) {
    const payload = JSON.parse(e.payload) as TrashPayload;
    if (payload.meeting) meetings.push(e.id);
    out.records++;
    out.values += payload.record ? Object.keys(JSON.parse(payload.record.fields) as object).length : payload.meeting ? 8 : payload.list ? 2 : 0;
    out.valueIndexRows += payload.indexRows ?? 0;
  }
  await repo.releaseTranscripts(ctx.db, meetings);
  out.relationships = held.links;
  out.listMemberships = held.members;
  // Stored idempotent answers that mention one (a create's, an update's, a delete's).
  out.storedResponses = await eraseAnswersHolding(ctx.db, workspaceId, ids);
  // The runs go before the events: on PostgreSQL the delete waits for a run's end being written
  // (its row locked), so that the event of that end is committed, and erased, by the next statement.
  out.enrichmentRuns = await eraseRunsOf(ctx.db, workspaceId, ids);
  const changes = await eraseChangesOf(ctx.db, workspaceId, ids);
  out.events = changes.events;
  out.historyRows = changes.historyRows;
  await repo.deleteTrashes(ctx.db, ids);
  return out;
}

/**
 * Purges the named entries, or every entry deleted more than `olderThanMs` ago (all when 0); an id
 * not in the workspace's trash is refused (the first of them, in the order named).
 */
export async function purge(ctx: WriteCtx, input: { ids?: readonly string[]; olderThanMs?: number }): Promise<Purged> {
  if (input.ids && input.ids.length > 0) {
    const named = [...new Set(input.ids)];
    const entries = await repo.findTrashesLocked(ctx.db, ctx.actor.workspaceId, named);
    const found = new Set(entries.map((e) => e.id));
    const missing = named.find((id) => !found.has(id));
    if (missing !== undefined) throw notFound('trashed record', missing);
    return purgeEntries(ctx, entries);
  }
  const before = input.olderThanMs === undefined ? undefined : isoNow(ctx.now - input.olderThanMs);
  return purgeEntries(ctx, await repo.listTrash(ctx.db, ctx.actor.workspaceId, before === undefined ? { locked: true } : { before, locked: true }));
}

/**
 * The sweeper's retention: purges entries of any workspace deleted more than `ageMs` before `now`,
 * at most `limit`, as background work: on SQLite it takes the writer when no request waits for it
 * (docs/performance.md §Background work yields the SQLite writer). A transaction holds at most as
 * many entries of one workspace as the database searches the texts for itself (`fewTexts`): the
 * writer is held for that search of a few ids, never for a pass over all the workspace's events in
 * the process, which a request coming meanwhile would wait for (docs/trash.md §Purge). Returns how
 * many.
 */
export async function purgeExpiredTrash(db: Executor, now: number, ageMs: number, limit: number): Promise<number> {
  const due = await repo.expiredTrash(db, isoNow(now - ageMs), limit);
  let n = 0;
  for (const [workspaceId, ofOne] of Map.groupBy(due, (e) => e.workspace_id))
    for (const part of chunks(ofOne, fewTexts(db))) {
      // Another process may have purged or restored some meanwhile: those are left out. A purge
      // beside a restore of a linked entry takes their locks in the other order, and PostgreSQL
      // cancels one of them (docs/trash.md §Restore): the purge changes nothing outside its
      // transaction, so it runs again, as `rolodex trash purge` does (docs/design.md §Database).
      const once = async (tx: Tx) => {
        const ctx = operatorCtx(tx, workspaceId, { now });
        return (
          await purgeEntries(
            ctx,
            await repo.findTrashesLocked(
              tx,
              workspaceId,
              part.map((e) => e.id),
            ),
          )
        ).records;
      };
      n += await inBackground(() => write(db, once, { rerun: () => {} }));
    }
  return n;
}
