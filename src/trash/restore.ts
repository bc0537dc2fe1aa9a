// Restoring the trash (docs/trash.md), for the operator: a restore puts a record's rows back with
// every link that can come back (a link whose other end is itself in the trash moves to that entry,
// to come back with it; one whose other end was purged is gone), refusing one that would take a
// unique value another record now holds. It runs in the caller's transaction; purging is
// ./purge.ts.
import { appendEvent } from '../changes/service.ts';
import { loadDefinitions, type TypeDefinitions } from '../definitions/service.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import * as lists from '../lists/repository.ts';
import { membershipsMoved } from '../lists/service.ts';
import * as meetings from '../meetings/repository.ts';
import { archivedValueTaken, definitionsToPutBack } from '../records/service.ts';
import * as records from '../records/repository.ts';
import { indexedScalar, valueRows } from '../records/index/values.ts';
import { valueTaken, writeValueIndex } from '../records/index/repository.ts';
import * as repo from './repository.ts';
import { restoredResource, type TrashPayload } from './service.ts';

/** Targets that are never records, so never in the trash: members and files. */
const NOT_RECORDS = new Set(['member', 'file']);

/** Whether `row` holds a value no other record may hold: a unique field's, or an externalId. */
function holdsUnique(defs: TypeDefinitions, row: records.RecordRow): boolean {
  if (row.external_id !== null) return true;
  return Object.keys(JSON.parse(row.fields) as object).some((key) => (defs.fields.get(key) ?? defs.archived.get(key))?.unique);
}

async function refuseTakenValues(ctx: Ctx, defs: TypeDefinitions, row: records.RecordRow): Promise<void> {
  const stored = JSON.parse(row.fields) as Record<string, unknown>;
  for (const [key, v] of Object.entries(stored)) {
    // An archived field's values come back with unarchive, so they stay unique as well; the value
    // index holds no rows of one, so its holders are read from the records.
    const held = defs.archived.get(key);
    const archived = held?.unique === true;
    const def = defs.fields.get(key);
    if (!def?.unique && !archived) continue;
    const taken = async (x: unknown) => {
      if (archived || def === undefined) return archivedValueTaken(ctx.db, row.workspace_id, row.kind, held ?? { key, valueType: 'TEXT' }, x, row.id);
      const indexed = indexedScalar(def.valueType, x);
      return indexed !== undefined && valueTaken(ctx.db, row.workspace_id, row.kind, key, indexed, row.id);
    };
    for (const x of Array.isArray(v) ? v : [v])
      if (await taken(x))
        throw new AppError('duplicate_value', `Another ${row.kind} now holds the value of "${key}"; ${row.id} stays in the trash.`, { param: `fields.${key}` });
  }
  if (row.external_id !== null && (await records.externalIdsTaken(ctx.db, row.workspace_id, row.kind, [row.external_id])).size > 0)
    throw new AppError('duplicate_value', `Another ${row.kind} now holds externalId "${row.external_id}"; ${row.id} stays in the trash.`, {
      param: 'externalId',
    });
}

/**
 * The other ends of an entry's links: the live records' kinds, which ends are in the trash, and the
 * primary each merged end went into.
 */
interface Ends {
  kinds: Map<string, string>;
  trashed: Set<string>;
  mergedInto: Map<string, string>;
}

/** The record `id` is now: itself, or the primary that a merge (or a chain of them) took it into. */
function current(ends: Ends, id: string): string {
  let at = id;
  for (let next = ends.mergedInto.get(at); next !== undefined; next = ends.mergedInto.get(at)) at = next;
  return at;
}

const sourceIds = (rows: readonly repo.LinkRow[]) => rows.map((r) => r.source_id);
const otherEnd = (id: string) => (r: repo.LinkRow) => (r.source_id === id ? r.target_id : r.source_id);

/**
 * Sorts `ids` into live ones (`readLive` reads them locked against deletion) and trashed ones
 * (locked against a restore or purge), each until the restore commits (docs/trash.md §Restore). An
 * end whose own restore is under way is in neither read: its record is not yet committed, and the
 * read of the trash waits for that restore's lock on the entry and then finds the entry gone. So
 * the ends found in neither are read again, until a round after the first finds none of them:
 * those were purged. An end merged meanwhile (its entry marked merged, docs/merge.md §Links) stands
 * for its primary, which is read in turn: a merge renames the rows held for its duplicate, but not
 * rows a restore under way has already taken out of its entry.
 */
async function sortEnds(ctx: Ctx, ids: readonly string[], readLive: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>): Promise<Ends> {
  const ends: Ends = { kinds: new Map(), trashed: new Set(), mergedInto: new Map() };
  const known = (x: string) => ends.kinds.has(x) || ends.trashed.has(x) || ends.mergedInto.has(x);
  let pending = [...new Set(ids)];
  for (let round = 1; pending.length > 0; round++) {
    const live = await readLive(pending);
    const inTrash = await repo.trashEnds(
      ctx.db,
      ctx.actor.workspaceId,
      pending.filter((x) => !live.has(x)),
    );
    if (round > 1 && live.size === 0 && inTrash.size === 0) break;
    for (const [id, kind] of live) ends.kinds.set(id, kind);
    for (const [id, into] of inTrash)
      if (into === null) ends.trashed.add(id);
      else ends.mergedInto.set(id, into);
    const primaries = [...inTrash.values()].filter((x): x is string => x !== null && !known(x));
    pending = [...new Set([...pending.filter((x) => !known(x)), ...primaries])];
  }
  return ends;
}

/**
 * Reads the other ends of the links, each locked against deletion until the restore commits
 * (docs/trash.md §Restore): a delete of a live end waits and then moves the restored link with it,
 * a restore or purge of a trashed end waits and then finds the link held under its entry, and an
 * end being restored is waited for and found live (sortEnds). A delete of an end takes its type's
 * listing, then the end, then its lists' locks: a restore reads the ends after its own listing's
 * lock and before any list's, so that neither waits for the other in a circle.
 */
function readEnds(ctx: Ctx, id: string, rows: readonly repo.LinkRow[]): Promise<Ends> {
  // A link of the record to itself (a merge makes one, docs/merge.md §Links) has no other end.
  const ids = rows.map(otherEnd(id)).filter((x) => x !== id);
  return sortEnds(ctx, ids, (part) => records.kindsOf(ctx.db, part));
}

/** The lists among `ids` that are live, as sortEnds reads ends. */
async function liveLists(ctx: Ctx, ids: readonly string[]): Promise<ReadonlyMap<string, string>> {
  return new Map([...(await lists.existingLists(ctx.db, ids))].map((id) => [id, 'list']));
}

/**
 * The record's own rows, each position once (docs/trash.md §Restore): by relationship, in position
 * order (then by other end), a row whose position an earlier one took comes after it, and a has_one
 * keeps its first row. The entry holds the rows the record had when it was deleted, and after them
 * those that came back to it while it was in the trash (restoreLinks), so those it had win.
 */
function ownRows(rows: readonly repo.LinkRow[], defs: TypeDefinitions | undefined): repo.LinkRow[] {
  const last = new Map<string, number>();
  const out: repo.LinkRow[] = [];
  const order = (a: repo.LinkRow, b: repo.LinkRow) => a.position - b.position || (a.target_id < b.target_id ? -1 : a.target_id > b.target_id ? 1 : 0);
  for (const r of [...rows].sort(order)) {
    const before = last.get(r.name);
    if (before !== undefined && defs?.relationships.get(r.name)?.cardinality === 'has_one') continue;
    const position = before === undefined ? r.position : Math.max(r.position, before + 1);
    last.set(r.name, position);
    out.push({ ...r, position });
  }
  return out;
}

/**
 * Puts back the links an entry held: to live ends as they were, to trashed ends under those ends'
 * entries, and a link of the record to itself with the record. `defs`: the record's type, whose
 * has_one relationships keep one row.
 */
async function restoreLinks(ctx: WriteCtx, id: string, rows: readonly repo.LinkRow[], { kinds, trashed }: Ends, defs?: TypeDefinitions): Promise<number> {
  const other = otherEnd(id);
  // A link whose other end was purged is gone; the others are the record's own rows or others'.
  const left = rows.filter((r) => {
    const end = other(r);
    return end === id || trashed.has(end) || kinds.has(end) || (r.source_id === id && NOT_RECORDS.has(r.object_type));
  });
  const back: repo.LinkRow[] = [];
  const mine = left.filter((x) => x.source_id === id);
  for (const r of [...ownRows(mine, defs), ...left.filter((x) => x.source_id !== id)]) {
    const end = other(r);
    if (!trashed.has(end)) back.push(r);
    else if (r.source_id === id) await repo.holdLinks(ctx.db, end, [r]);
    else {
      // A row of the trashed end itself goes after the rows its entry holds of the relationship,
      // as it would go after that end's live rows: its restore then finds each position once.
      const last = await repo.lastHeld(ctx.db, end, end, r.name);
      await repo.holdLinks(ctx.db, end, [{ ...r, position: last === undefined ? r.position : last + 1 }]);
    }
  }
  // Rows the record owns come back as ownRows leaves them (it has none meanwhile); a row another
  // record owns comes back after that record's rows of the relationship, unless a has_one holds
  // another.
  const own = back.filter((r) => r.source_id === id);
  const theirs = back.filter((r) => r.source_id !== id);
  const kept: repo.LinkRow[] = [...own];
  // Their sources are locked as updates lock them: writers appending to one source's rows take turns.
  if (theirs.length > 0) await records.lockForChange(ctx.db, sourceIds(theirs));
  // Read once per relationship and per type, not per row: a source holds one row of each here (onceEach).
  const lastOf = new Map<string, Map<string, number>>();
  for (const [name, rows] of Map.groupBy(theirs, (r) => r.name)) lastOf.set(name, await records.lastPositions(ctx.db, name, sourceIds(rows)));
  const defsOf = new Map<string, TypeDefinitions | null>();
  for (const kind of new Set(theirs.map((r) => kinds.get(r.source_id) as string))) defsOf.set(kind, await loadDefinitions(ctx, { objectType: kind }));
  for (const r of theirs) {
    const sourceDefs = defsOf.get(kinds.get(r.source_id) as string);
    const last = lastOf.get(r.name)?.get(r.source_id);
    if (last !== undefined && sourceDefs?.relationships.get(r.name)?.cardinality === 'has_one') continue;
    kept.push({ ...r, position: last === undefined ? r.position : last + 1 });
  }
  await records.insertRelationshipRows(ctx.db, kept);
  return kept.length;
}

/**
 * Memberships held by a record's entry: back into live lists, to trashed lists' entries, dropped
 * for purged lists; the lists read are locked against deletion until the restore commits, as the
 * ends of links are. Returns the live lists it joined.
 */
async function restoreMemberships(ctx: WriteCtx, rows: readonly repo.MemberRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const { kinds: live, trashed } = await sortEnds(
    ctx,
    rows.map((r) => r.list_id),
    (ids) => liveLists(ctx, ids),
  );
  for (const r of rows) if (trashed.has(r.list_id)) await repo.holdMembers(ctx.db, r.list_id, [r]);
  const joined = await lists.putMemberships(
    ctx.db,
    rows.filter((r) => live.has(r.list_id)),
  );
  return joined.map((r) => r.list_id);
}

/**
 * The held rows with each link once: one row per source, name and target (the lowest position),
 * one membership per list and member (the earliest), docs/trash.md §Restore. A merge keeps one
 * held row per link (docs/merge.md §Links); a row held twice all the same comes back once, since
 * putting both back would break the live tables' keys and keep the record in the trash.
 */
function onceEach<T>(rows: readonly T[], key: (r: T) => string, order: (a: T, b: T) => number): T[] {
  const seen = new Map<string, T>();
  for (const r of [...rows].sort(order)) if (!seen.has(key(r))) seen.set(key(r), r);
  return [...seen.values()];
}
const linkKey = (r: repo.LinkRow) => `${r.source_id}\u0000${r.name}\u0000${r.target_id}`;
const memberKey = (r: repo.MemberRow) => `${r.list_id}\u0000${r.entity_id}`;

export interface Restored {
  id: string;
  objectType: string;
  links: number;
  /** A list's members put back. */
  members?: number;
}

/**
 * Restores one entry of ctx's workspace; a merged duplicate is refused (a merge is permanent). A
 * record's listing is taken as a create takes it (docs/pages.md §Creates that only insert): for
 * inserts, so that restores, creates and deletes of the type run side by side, unless the record
 * brings back a value that must stay unique, which is checked under the exclusive lock. Its
 * counts are kept after COMMIT only in a write that runs follow-ups (`write` with
 * `followUpFailed`), which the operator's `rolodex trash restore` uses (elsewhere the lock is taken
 * exclusively).
 */
export async function restore(ctx: WriteCtx, input: { id: string }): Promise<Restored> {
  const entry = await repo.findTrashLocked(ctx.db, ctx.actor.workspaceId, input.id);
  if (!entry) throw notFound('trashed record', input.id);
  if (entry.merged_into !== null)
    throw new AppError('invalid_value', `${entry.id} was merged into ${entry.merged_into}; a merge is permanent and cannot be restored.`, { param: 'id' });
  const payload = JSON.parse(entry.payload) as TrashPayload;
  // The rows the entry holds; a meeting holds no memberships.
  const members = onceEach(payload.meeting ? [] : await repo.releaseMembers(ctx.db, entry.id), memberKey, (a, b) => a.added_at.localeCompare(b.added_at));
  const links = onceEach(await repo.releaseLinks(ctx.db, entry.id), linkKey, (a, b) => a.position - b.position);
  const record = payload.record;
  const defs = record ? await definitionsToPutBack(ctx, record) : undefined;
  const unique = record !== undefined && defs !== undefined && holdsUnique(defs, record);
  // The listing first, then the ends, then lists: in the order a delete of an end takes them.
  if (record) await records.lockRecords(ctx.db, record.workspace_id, record.kind, unique ? 'write' : 'insert');
  const ends = await readEnds(ctx, entry.id, links);
  const toPrimaries = (r: repo.LinkRow) => ({ ...r, source_id: current(ends, r.source_id), target_id: current(ends, r.target_id) });
  const linksNow = onceEach(links.map(toPrimaries), linkKey, (a, b) => a.position - b.position);
  let joined: string[] = [];
  let listMembers: number | undefined;
  if (record && defs) {
    if (unique) await refuseTakenValues(ctx, defs, record);
    await records.insertRecord(ctx.db, record);
    await writeValueIndex(ctx.db, defs, [], valueRows(record.workspace_id, defs, record.id, JSON.parse(record.fields) as Record<string, unknown>));
    joined = await restoreMemberships(ctx, members);
  } else if (payload.meeting) {
    const { row, contents, participants } = payload.meeting;
    await meetings.lockMeetings(ctx.db, row.workspace_id);
    if (row.external_id !== null && (await meetings.meetingsByExternalId(ctx.db, row.workspace_id, [row.external_id])).size > 0)
      throw new AppError('duplicate_value', `Another meeting now holds externalId "${row.external_id}"; ${row.id} stays in the trash.`, {
        param: 'externalId',
      });
    await meetings.insertMeeting(ctx.db, row, contents ?? { meeting_id: row.id, description: null, transcript_id: null }, participants);
    await repo.releaseTranscript(ctx.db, entry.id);
  } else if (payload.list) {
    // Locked before the check, as a meeting's: a new list given the externalId meanwhile is seen.
    await lists.lockLists(ctx.db, payload.list.workspace_id);
    const externalId = payload.list.external_id ?? null;
    if (externalId !== null && (await lists.listsByExternalId(ctx.db, payload.list.workspace_id, [externalId])).size > 0)
      throw new AppError('duplicate_value', `Another list now holds externalId "${externalId}"; ${payload.list.id} stays in the trash.`, {
        param: 'externalId',
      });
    // The members read are locked against deletion until the restore commits, as the ends of links are.
    const memberEnds = await sortEnds(
      ctx,
      members.map((m) => m.entity_id),
      (part) => records.kindsOf(ctx.db, part),
    );
    const now = onceEach(
      members.map((m) => ({ ...m, entity_id: current(memberEnds, m.entity_id) })),
      memberKey,
      (a, b) => a.added_at.localeCompare(b.added_at),
    );
    for (const m of now) if (memberEnds.trashed.has(m.entity_id)) await repo.holdMembers(ctx.db, m.entity_id, [m]);
    const back = now.filter((m) => memberEnds.kinds.has(m.entity_id));
    await lists.putList(ctx.db, payload.list, back);
    listMembers = back.length;
  }
  const restoredLinks = await restoreLinks(ctx, entry.id, linksNow, ends, defs);
  await repo.deleteTrash(ctx.db, entry.id);
  await appendEvent(ctx, { type: `${entry.object_type}.restored`, object: await restoredResource(ctx, entry, payload) });
  await membershipsMoved(ctx, 'list.members_added', joined, entry.id);
  return { id: entry.id, objectType: entry.object_type, links: restoredLinks, ...(listMembers === undefined ? {} : { members: listMembers }) };
}
