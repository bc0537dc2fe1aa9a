// Moving records to the trash (docs/trash.md): a deleted record's rows leave the live tables, so
// that every read, filter, count, list-member page and uniqueness check stops seeing it with no
// condition of its own. Its relationship rows (both ends) and list memberships are held under its
// trash entry; the answer is the resource as a retrieve gave it just before, and a second delete
// answers it again. Each function runs inside the caller's one transaction (ctx.db).
import { appendEvent } from '../changes/service.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { notFound } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import * as lists from '../lists/repository.ts';
import { toResource as listResource, membershipsMoved } from '../lists/service.ts';
import * as meetings from '../meetings/repository.ts';
import { relationshipsOf } from '../meetings/relationships.ts';
import { toResource as meetingResource } from '../meetings/service.ts';
import { loadRecords } from '../records/resource.ts';
import { type RecordResource, type RecordType, getRecord, requireDefinitions } from '../records/service.ts';
import * as records from '../records/repository.ts';
import { valueRows } from '../records/index/values.ts';
import { writeValueIndex } from '../records/index/repository.ts';
import * as repo from './repository.ts';

/** The rows a restore puts back, kept in the entry's payload. */
export interface TrashPayload {
  record?: records.RecordRow;
  /** How many value-index rows the record held (a purge counts them). */
  indexRows?: number;
  meeting?: { row: meetings.MeetingRow; contents: meetings.ContentsRow | undefined; participants: string[] };
  list?: lists.ListRow;
}

async function insertEntry(ctx: WriteCtx, id: string, objectType: string, resource: unknown, payload: TrashPayload, mergedInto: string | null = null) {
  await repo.insertTrash(ctx.db, {
    id,
    workspace_id: ctx.actor.workspaceId,
    object_type: objectType,
    deleted_at: isoNow(ctx.now),
    merged_into: mergedInto,
    resource: JSON.stringify(resource),
    payload: JSON.stringify(payload),
  });
}

/** The answer of a delete of a record already in the trash: the body its first delete gave. */
async function again(ctx: Ctx, objectType: string, id: string): Promise<repo.TrashRow> {
  const entry = await repo.findTrash(ctx.db, ctx.actor.workspaceId, id);
  if (!entry || entry.object_type !== objectType) throw notFound(objectType, id);
  return entry;
}

/**
 * Moves a live record (locked by the caller's partition lock) to the trash: its value index and
 * trigrams, its relationship rows of either end, its memberships, its row and its rank. A merge
 * calls this for its duplicate (`merged`: the primary it went into, and the type's definitions the
 * merge read) after moving the links it keeps and every membership, so none is left to take.
 * Returns the lists the record left.
 */
export async function takeRecord(
  ctx: WriteCtx,
  row: records.RecordRow,
  resource: unknown,
  merged?: { into: string; defs: TypeDefinitions },
): Promise<string[]> {
  const defs = merged?.defs ?? (await requireDefinitions(ctx, row.kind));
  const indexRows = valueRows(row.workspace_id, defs, row.id, JSON.parse(row.fields) as Record<string, unknown>).length;
  await writeValueIndex(ctx.db, defs, [row.id], []);
  await repo.takeLinks(ctx.db, row.id, row.id);
  const memberships = merged ? [] : await lists.takeMemberships(ctx.db, row.id);
  await repo.holdMembers(ctx.db, row.id, memberships);
  await records.deleteRecord(ctx.db, row);
  await insertEntry(ctx, row.id, row.kind, resource, { record: row, indexRows }, merged?.into ?? null);
  return memberships.map((m) => m.list_id);
}

/**
 * The object of a restore's event: the resource as a full-access key retrieves it once the restore
 * has put it back (docs/events.md §Shape), not as it was deleted. Its links are those that came
 * back: one to a record merged meanwhile names the primary, one to a record in the trash or purged
 * is not shown, and a meeting's derived relationships are read again. A list shows no links, so
 * its entry's resource is the list as it comes back.
 */
export async function restoredResource(ctx: Ctx, entry: repo.TrashRow, payload: TrashPayload): Promise<{ id: string }> {
  if (payload.record) {
    const [resource] = await loadRecords(ctx, { kind: payload.record.kind, ids: [payload.record.id] });
    if (resource) return resource;
  } else if (payload.meeting) {
    const { row, contents } = payload.meeting;
    const derived = (await relationshipsOf(ctx, [row])).get(row.id) ?? { contact: [], account: [], opportunity: [] };
    return meetingResource(ctx, row, 'FULL', contents, derived);
  }
  return JSON.parse(entry.resource) as { id: string };
}

export async function trashRecord(ctx: WriteCtx, type: RecordType, input: { id: string }): Promise<RecordResource> {
  // The type's listing is taken for inserts, so deletes and creates of the type run side by side;
  // the record's own row lock makes two deletes of it take turns (findRecordToDelete).
  await records.lockRecords(ctx.db, ctx.actor.workspaceId, type.objectType, 'insert');
  const find = () => records.findRecordToDelete(ctx.db, ctx.actor.workspaceId, type.objectType, input.id);
  let row = await find();
  if (!row) {
    const entry = await repo.findTrash(ctx.db, ctx.actor.workspaceId, input.id);
    if (entry?.object_type === type.objectType) return JSON.parse(entry.resource) as RecordResource;
    // A restore, which takes the listing shared too, may have committed between the two reads
    // (each sees what was committed when it began, on PostgreSQL): the record is live again.
    row = await find();
    if (!row) throw notFound(type.objectType, input.id);
  }
  const resource = await getRecord(ctx, { ...input, type });
  const left = await takeRecord(ctx, row, resource);
  await appendEvent(ctx, { type: `${type.objectType}.deleted`, object: resource });
  await membershipsMoved(ctx, 'list.members_removed', left, row.id);
  return resource;
}

type Meeting = ReturnType<typeof meetingResource>;

/**
 * A meeting as the caller sees it: at METADATA its description and transcript are withheld
 * (docs/meetings.md §Who sees what), by the rule's one statement on the meeting as kept and its
 * participants' folded addresses.
 */
async function meetingFor(ctx: Ctx, full: Meeting, participants: readonly string[]): Promise<Meeting> {
  const email = ctx.actor.userId === null ? undefined : await meetings.userEmail(ctx.db, ctx.actor.workspaceId, ctx.actor.userId);
  const kept = { id: full.id, privacy_setting: full.fields.$privacySetting.value };
  if ((await meetings.fullAccessOf(ctx.db, [kept], email, new Map([[full.id, participants]]))).has(full.id)) return full;
  return {
    ...full,
    accessLevel: 'METADATA',
    fields: { ...full.fields, $description: { ...full.fields.$description, value: null } },
    relationships: { ...full.relationships, $transcript: { ...full.relationships.$transcript, values: [] } },
  };
}

export async function trashMeeting(ctx: WriteCtx, input: { id: string }): Promise<Meeting> {
  await meetings.lockMeetings(ctx.db, ctx.actor.workspaceId);
  // Locked: an update of it that came first is waited for, so the entry keeps what it wrote.
  const row = await meetings.findMeetingToDelete(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) {
    const entry = await again(ctx, 'meeting', input.id);
    return meetingFor(ctx, JSON.parse(entry.resource) as Meeting, (JSON.parse(entry.payload) as TrashPayload).meeting?.participants ?? []);
  }
  const derived = (await relationshipsOf(ctx, [row])).get(row.id);
  const { contents, participants } = await meetings.takeMeeting(ctx.db, row);
  // Kept at FULL: a later delete by a caller who sees more gets what it may see.
  const full = meetingResource(ctx, row, 'FULL', contents, derived ?? { contact: [], account: [], opportunity: [] });
  await repo.takeLinks(ctx.db, row.id, row.id);
  await repo.holdTranscript(ctx.db, row, contents?.transcript_id, participants);
  await insertEntry(ctx, row.id, 'meeting', full, { meeting: { row, contents, participants } });
  await appendEvent(ctx, { type: 'meeting.deleted', object: full });
  return meetingFor(ctx, full, participants);
}

export async function trashList(ctx: WriteCtx, input: { id: string }): Promise<ReturnType<typeof listResource>> {
  await lists.lockLists(ctx.db, ctx.actor.workspaceId);
  // Locked before its members are read: a restore that put members into it has committed.
  const row = await lists.findListToDelete(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) return JSON.parse((await again(ctx, 'list', input.id)).resource) as ReturnType<typeof listResource>;
  const resource = listResource(ctx, row);
  // Its memberships are kept for a restore, held by the list's entry.
  await repo.holdMembers(ctx.db, row.id, await lists.takeList(ctx.db, row));
  await insertEntry(ctx, row.id, 'list', resource, { list: row });
  await appendEvent(ctx, { type: 'list.deleted', object: resource });
  return resource;
}
