// The change log (docs/events.md): every write appends its events, and a record write its field
// changes, in the write's own transaction (ctx.db inside write()). A write that rolls back leaves
// nothing; a write that changed nothing calls nothing here. One call per fact:
//   appendEvent(ctx, { type: 'contact.updated', object, changes })
//   recordCreated(ctx, { recordId, fields })        the record's starting snapshot (isCreate)
//   recordFieldChanges(ctx, { recordId, changes })  one history row per changed field
// Writers of many records at once (the import) call appendEvents, recordCreatedMany and
// recordFieldChangesMany once per chunk: multi-row statements, not one per record.
import type { Actor, Ctx, WriteCtx } from '../lib/context.ts';
import type { EventType } from './event-types.ts';
import { isoNow, newId } from '../lib/ids.ts';
import * as repo from './repository.ts';
import type { FieldHistoryTable } from './tables.ts';

export interface Change {
  from: unknown;
  to: unknown;
}

export type Changes = Record<string, Change>;

export interface EventActor {
  type: 'user' | 'workspace_key' | 'operator';
  id: string | null;
}

export interface EventInput {
  /** `<type>.created`, `<type>.updated`, `list.members_added`, … (docs/events.md §Types). */
  type: EventType;
  /** The resource as the API returns it to a full-access key; its `id` names the event's object. */
  object: { readonly id: string };
  /** On updates and merges: what changed, key by key. */
  changes?: Changes;
  /** On list.members_added and list.members_removed: the records added or removed. */
  members?: readonly string[];
  /** On merges: the record merged into the object, then trashed. */
  duplicateId?: string;
}

export interface Event {
  id: string;
  type: string;
  occurredAt: string;
  workspaceId: string;
  actor: EventActor;
  data: { object: unknown; changes?: Changes; members?: readonly string[]; duplicateId?: string };
}

/** Who acted: a user's key, a workspace key, or an operator (the CLI, the import: no key). */
export function eventActor(actor: Actor): EventActor {
  if (actor.subjectType === 'user') return { type: 'user', id: actor.userId };
  if (actor.keyId !== undefined) return { type: 'workspace_key', id: actor.keyId };
  return { type: 'operator', id: null };
}

function eventOf(ctx: Ctx, input: EventInput, ids: (kind: 'evt') => string): Event {
  return {
    id: ids('evt'),
    type: input.type,
    occurredAt: isoNow(ctx.now),
    workspaceId: ctx.actor.workspaceId,
    actor: eventActor(ctx.actor),
    data: {
      object: input.object,
      ...(input.changes === undefined ? {} : { changes: input.changes }),
      ...(input.members === undefined ? {} : { members: input.members }),
      ...(input.duplicateId === undefined ? {} : { duplicateId: input.duplicateId }),
    },
  };
}

const rowOf = (event: Event, input: EventInput): repo.EventRow => ({
  id: event.id,
  workspace_id: event.workspaceId,
  type: event.type,
  object_id: input.object.id,
  occurred_at: event.occurredAt,
  body: JSON.stringify(event),
});

/** Appends one event in the caller's transaction; returns it. */
export async function appendEvent(ctx: WriteCtx, input: EventInput): Promise<Event> {
  return (await appendEvents(ctx, [input]))[0]!;
}

/**
 * Appends several events in the caller's transaction, in order, in multi-row statements (and one
 * per statement for their deliveries). `ids` draws their ids: a writer of many (the import) passes
 * its id sequence, so that they are appended to the ids' index in order rather than spread over it.
 */
export async function appendEvents(ctx: WriteCtx, inputs: readonly EventInput[], ids: (kind: 'evt') => string = (k) => newId(k, ctx.now)): Promise<Event[]> {
  const events = inputs.map((input) => eventOf(ctx, input, ids));
  await repo.insertEvents(
    ctx.db,
    events.map((e, i) => rowOf(e, inputs[i]!)),
  );
  return events;
}

/** An event of appendEventsJson: its object already serialised (the resource's JSON text). */
export interface EventJsonInput {
  type: EventType;
  /** The id of the object `json` holds. */
  objectId: string;
  /** JSON text of the resource as the API returns it to a full-access key. */
  json: string;
  changes?: Changes;
  /**
   * The event's time when it is not ctx.now: the updatedAt the write gave the record
   * (docs/records.md §Times of writes).
   */
  at?: string;
}

/**
 * appendEvents for a writer of many that has each object as JSON text already (the import): each
 * body is the same text JSON.stringify gives the event appendEvents builds (docs/events.md
 * §Shape), assembled around the object's text, so no event object is built and no object is
 * serialised twice.
 */
export async function appendEventsJson(ctx: WriteCtx, inputs: readonly EventJsonInput[], ids: (kind: 'evt') => string): Promise<void> {
  if (inputs.length === 0) return;
  const now = isoNow(ctx.now);
  const ws = ctx.actor.workspaceId;
  const middle = `,"workspaceId":${JSON.stringify(ws)},"actor":${JSON.stringify(eventActor(ctx.actor))},"data":{"object":`;
  const rows: repo.EventRow[] = [];
  for (const input of inputs) {
    const id = ids('evt');
    const at = input.at ?? now;
    const changes = input.changes === undefined ? '' : `,"changes":${JSON.stringify(input.changes)}`;
    const body = `{"id":${JSON.stringify(id)},"type":${JSON.stringify(input.type)},"occurredAt":${JSON.stringify(at)}${middle}${input.json}${changes}}}`;
    rows.push({ id, workspace_id: ws, type: input.type, object_id: input.objectId, occurred_at: at, body });
  }
  await repo.insertEvents(ctx.db, rows);
}

/** The record's value of every field when it was created (fields absent are unset). */
export async function recordCreated(ctx: WriteCtx, input: { recordId: string; fields: Record<string, unknown> }): Promise<void> {
  await repo.insertSnapshot(ctx.db, {
    record_id: input.recordId,
    workspace_id: ctx.actor.workspaceId,
    value: JSON.stringify(input.fields),
    recorded_at: isoNow(ctx.now),
    is_create: 1,
  });
}

/**
 * recordCreated for many records (an import's chunk), in multi-row statements. `json` is the JSON
 * text of the record's fields, as its row stores them (not serialised again).
 */
export async function recordCreatedMany(ctx: WriteCtx, inputs: ReadonlyArray<{ recordId: string; json: string }>): Promise<void> {
  const at = isoNow(ctx.now);
  const ws = ctx.actor.workspaceId;
  const rows: FieldHistoryTable[] = [];
  for (const r of inputs) rows.push({ record_id: r.recordId, field: '*', seq: 0, workspace_id: ws, value: r.json, recorded_at: at, is_create: 1 });
  await repo.insertSnapshots(ctx.db, rows);
}

/**
 * The changes of one record's fields by one write: the new value of each changed field (null:
 * cleared), and `at`, the `updatedAt` the write gave the record (docs/records.md §Times of writes),
 * which is ctx.now unless the record's stored time was later.
 */
export interface FieldChanges {
  recordId: string;
  changes: ReadonlyMap<string, unknown>;
  at?: string;
}

/**
 * Records one write's field changes. Call it after the statement that updated the record's row,
 * which orders concurrent writers of one record.
 */
export async function recordFieldChanges(ctx: WriteCtx, input: FieldChanges): Promise<void> {
  await recordFieldChangesMany(ctx, [input]);
}

/** recordFieldChanges for many records (an import's chunk), in multi-row statements. */
export async function recordFieldChangesMany(ctx: WriteCtx, inputs: readonly FieldChanges[]): Promise<void> {
  const now = isoNow(ctx.now);
  const values: [string, string, string | null, string][] = [];
  for (const { recordId, changes, at } of inputs)
    for (const [k, v] of changes) values.push([recordId, k, v === null || v === undefined ? null : JSON.stringify(v), at ?? now]);
  if (values.length === 0) return;
  await repo.insertChanges(ctx.db, { workspaceId: ctx.actor.workspaceId, values });
}
