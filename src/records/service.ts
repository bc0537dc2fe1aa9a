// The records module's service (docs/records.md §The API): what the routes, the other modules and
// the CLI call, each `fn(ctx, input)` with the record type in `input`. Writes check, in order, the
// body's shape (route schema), then keys of fields and relationships, then values, then what needs
// the database (unique values, ids); nothing is written before every check has passed. Reads shape
// rows through src/records/resource.ts.
import { appendEvent, type Changes, recordCreated, recordFieldChanges } from '../changes/service.ts';
import { SYSTEM_CATALOGUES } from '../definitions/catalogue.ts';
import type { RelationshipDef, TypeDefinitions } from '../definitions/service.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { agreeingPage, type Page } from '../lib/paging.ts';
import { laterIso } from '../lib/dates.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { trashedAmong } from '../trash/repository.ts';
import { existingUserIds } from '../users/repository.ts';
import { filterQuery } from './filter/service.ts';
import { type RecordResource, type RecordType, loadRecords, relationshipValues, requireDefinitions, toResource } from './resource.ts';
import * as repo from './repository.ts';
import { indexedScalar, valueRows } from './index/values.ts';
import { valueTaken, writeValueIndex } from './index/repository.ts';
import { checkFieldKeys, checkFieldValues, checkRequiredFields, heldIn } from './write-fields.ts';
import {
  checkCreateRelationships,
  checkRelationshipKeys,
  checkRequiredRelationships,
  checkUpdateRelationships,
  idsByType,
  plan,
  type RelationshipWrite,
} from './write-relationships.ts';

export {
  customRecordType,
  type DerivedResolver,
  type RecordResource,
  RECORD_TYPES,
  type RecordType,
  loadRecords,
  registerDerived,
  requireDefinitions,
} from './resource.ts';
export { archivedValueTaken, definitionsToPutBack, getDefinitions, setArchived } from './definitions-view.ts';
export { fieldHistory, type HistoryInput } from './history.ts';

export interface WriteInput {
  fields?: Record<string, unknown>;
  relationships?: Record<string, unknown>;
}

/** Which type a call is about: a system type of RECORD_TYPES, or customRecordType(slug). */
export interface OfType {
  type: RecordType;
}

/** True when the write sets a unique field: its check needs the listing's lock to itself, so two writers cannot both take one value. */
function setsUnique(defs: TypeDefinitions, values: Map<string, unknown>): boolean {
  return [...values.keys()].some((k) => defs.fields.get(k)?.unique);
}

/** The keys of `values` whose unique value another record of the type holds: the first one only, unless `all`. */
async function takenKeys(ctx: Ctx, defs: TypeDefinitions, values: Map<string, unknown>, recordId: string, all: boolean): Promise<string[]> {
  const taken: string[] = [];
  for (const [key, v] of values) {
    const def = defs.fields.get(key);
    if (v === null || !def?.unique) continue;
    for (const x of Array.isArray(v) ? v : [v]) {
      const indexed = indexedScalar(def.valueType, x);
      if (indexed !== undefined && (await valueTaken(ctx.db, ctx.actor.workspaceId, defs.objectType, key, indexed, recordId))) {
        taken.push(key);
        if (!all) return taken;
        break;
      }
    }
  }
  return taken;
}

async function checkUnique(ctx: Ctx, defs: TypeDefinitions, values: Map<string, unknown>, recordId: string): Promise<void> {
  const [key] = await takenKeys(ctx, defs, values, recordId, false);
  if (key !== undefined) throw new AppError('duplicate_value', `Another ${defs.objectType} already holds this value of "${key}".`, { param: `fields.${key}` });
}

/**
 * Every id names an resource of the workspace of the relationship's type (members: its users), else
 * relationship_entity_missing. The records whose own rows the write changes (the other end of a
 * writable inverse: an account's `$contact` writes its contacts' `$account` rows) are locked as
 * their own update locks them, before the write reads the relationship it changes.
 */
async function checkIds(ctx: Ctx, writes: readonly RelationshipWrite[]): Promise<void> {
  const ws = ctx.actor.workspaceId;
  const changed = new Set(writes.filter((w) => w.def.storage.kind === 'inverse').map((w) => w.def.objectType));
  for (const [objectType, ids] of idsByType(writes)) {
    if (ids.size === 0) continue;
    const wanted = [...ids.keys()];
    // Any other type is a record kind: system or custom (a type without records finds none).
    const found =
      objectType === 'member'
        ? await existingUserIds(ctx.db, ws, wanted)
        : await repo.existingRecords(ctx.db, ws, objectType, wanted, { forChange: changed.has(objectType) });
    const missing = [...ids.keys()].filter((id) => !found.has(id));
    const trashed = missing.length === 0 ? new Set<string>() : await trashedAmong(ctx.db, ws, missing, objectType);
    for (const [id, param] of ids) {
      if (trashed.has(id)) throw new AppError('relationship_entity_inactive', `The ${objectType} "${id}" is in the trash; nothing was changed.`, { param });
      if (!found.has(id)) throw new AppError('relationship_entity_missing', `No ${objectType} with id "${id}" exists; nothing was changed.`, { param });
    }
  }
}

/**
 * Whether the other end of relationship `def` of `defs`' type shows it as a writable link
 * (account `$contact`, contact `$account`): then a change of it moves updatedAt of the records at
 * both ends (docs/records.md §Writing relationships).
 */
export function twoSided(defs: TypeDefinitions, def: RelationshipDef): boolean {
  if (def.storage.kind === 'inverse') return def.writable === 'yes';
  const other = SYSTEM_CATALOGUES[def.objectType];
  return Object.values(other?.relationships ?? {}).some(
    (r) => r.writable === 'yes' && r.storage.kind === 'inverse' && r.storage.objectType === defs.objectType && r.storage.key === def.key,
  );
}

/**
 * The targets of a record's own rows, as read, that are still live, locked against deletion until
 * the write commits (docs/trash.md §A record in the trash is gone from the live tables). Rewriting
 * the rows puts back every target it keeps: one that a delete moved to the trash after the rows
 * were read (its link then held by its entry) must not come back as a live link. A delete under
 * way is waited for; one that begins later waits for the write and then moves the link with it.
 */
async function stillLinked(ctx: Ctx, objectType: string, targets: readonly string[]): Promise<string[]> {
  // Members are the workspace's users, never in the trash.
  if (targets.length === 0 || objectType === 'member') return [...targets];
  const live = await repo.existingRecords(ctx.db, ctx.actor.workspaceId, objectType, targets);
  return targets.filter((id) => live.has(id));
}

/** Applies relationship writes to one record; adds each changed set to `changes` (the event's). */
async function applyRelationships(
  ctx: Ctx,
  defs: TypeDefinitions,
  id: string,
  writes: readonly RelationshipWrite[],
  current: Map<string, string[]>,
  at: string,
  changes: Changes = {},
) {
  let changed = false;
  for (const w of writes) {
    const read = current.get(w.def.key) ?? [];
    const before = w.def.storage.kind === 'own' ? await stillLinked(ctx, w.def.objectType, read) : read;
    const next = plan(w, before);
    const added = next.filter((x) => !before.includes(x));
    const removed = before.filter((x) => !next.includes(x));
    const storage = w.def.storage;
    // Own rows keep the order written; an inverse one is answered in its sources' order whatever
    // order the body names them in, so only a link or an unlink changes it.
    const reordered = storage.kind === 'own' && next.join() !== before.join();
    if (added.length === 0 && removed.length === 0 && !reordered) continue;
    changed = true;
    changes[w.def.key] = { from: before, to: next };
    if (storage.kind === 'inverse') await repo.linkFromSources(ctx.db, id, defs.objectType, storage.key, added, removed);
    else await repo.replaceOwn(ctx.db, id, w.def.key, w.def.objectType, next);
    if (twoSided(defs, w.def)) await repo.touchRecords(ctx.db, [...added, ...removed], at);
  }
  return changed;
}

/** A value in a form where equal values compare equal (object members sorted). */
export function canonical(v: unknown): string {
  if (v !== null && typeof v === 'object' && !Array.isArray(v))
    return JSON.stringify(Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))));
  return JSON.stringify(v);
}

export async function createRecord(ctx: WriteCtx, input: OfType & WriteInput): Promise<RecordResource> {
  const { type } = input;
  const defs = await requireDefinitions(ctx, type.objectType);
  const fields = input.fields ?? {};
  const relationships = input.relationships ?? {};
  checkFieldKeys(defs, fields);
  checkRelationshipKeys(defs, relationships, 'create');
  checkRequiredFields(defs, fields);
  checkRequiredRelationships(defs, relationships);
  const values = checkFieldValues(defs, fields);
  const writes = checkCreateRelationships(defs, relationships);
  const createdBy = defs.relationships.get('$createdBy');
  if (createdBy && !Object.hasOwn(relationships, '$createdBy') && ctx.actor.subjectType === 'user' && ctx.actor.userId)
    writes.push({ def: createdBy, replace: new Map([[ctx.actor.userId, 'relationships.$createdBy']]), add: new Map(), remove: new Map() });
  const ws = ctx.actor.workspaceId;
  await repo.lockRecords(ctx.db, ws, type.objectType, setsUnique(defs, values) ? 'write' : 'insert');
  const id = newId(type.idKind, ctx.now);
  await checkUnique(ctx, defs, values, id);
  await checkIds(ctx, writes);
  const stored = Object.fromEntries([...values].filter(([, v]) => v !== null));
  const at = isoNow(ctx.now);
  const row: repo.RecordRow = {
    id,
    workspace_id: ws,
    kind: type.objectType,
    external_id: null,
    fields: JSON.stringify(stored),
    created_at: at,
    updated_at: at,
  };
  await repo.insertRecord(ctx.db, row);
  // A new record has no index rows to remove, and its own relationship rows are those just
  // written: neither is read back. No other record can name it before it commits, so its inverse
  // relationships (a contact's notes) are empty unless this create linked some, and are read only
  // then, in their stored order (docs/performance.md §Record reads and writes).
  await writeValueIndex(ctx.db, defs, [], valueRows(ws, defs, id, stored));
  await applyRelationships(ctx, defs, id, writes, new Map(), at);
  const own = new Map<string, string[]>();
  for (const w of writes) if (w.def.storage.kind === 'own') own.set(w.def.key, plan(w, []));
  const linksInverse = writes.some((w) => w.def.storage.kind === 'inverse');
  const known = { own: new Map([[id, own]]), inverse: linksInverse ? undefined : new Map() };
  const resource = toResource(ctx, defs, row, (await relationshipValues(ctx, defs, [id], known)).get(id));
  await recordCreated(ctx, { recordId: id, fields: stored });
  await appendEvent(ctx, { type: `${type.objectType}.created`, object: resource });
  return resource;
}

/**
 * `omitTaken`: a unique value another record holds is left out of the write rather than refused,
 * the rest written (an enrichment run's write, docs/enrichment.md §What a run fills).
 */
export async function updateRecord(ctx: WriteCtx, input: OfType & WriteInput & { id: string }, opts: { omitTaken?: boolean } = {}): Promise<RecordResource> {
  const { type } = input;
  const ws = ctx.actor.workspaceId;
  const row = await repo.findRecordToChange(ctx.db, ws, type.objectType, input.id);
  if (!row) throw notFound(type.objectType, input.id);
  const defs = await requireDefinitions(ctx, type.objectType);
  const fields = input.fields ?? {};
  const relationships = input.relationships ?? {};
  checkFieldKeys(defs, fields);
  checkRelationshipKeys(defs, relationships, 'update');
  // The stored fields, read (locked) before any check: only a required field the record holds
  // cannot be cleared, and a null for one it lacks changes nothing (docs/records.md §Writing fields).
  const stored = JSON.parse(row.fields) as Record<string, unknown>;
  const values = checkFieldValues(defs, fields, 'fields', 'exact', heldIn(stored));
  const writes = checkUpdateRelationships(defs, relationships, type.updateOperations);
  if (setsUnique(defs, values)) await repo.lockRecords(ctx.db, ws, type.objectType);
  if (opts.omitTaken) for (const key of await takenKeys(ctx, defs, values, row.id, true)) values.delete(key);
  else await checkUnique(ctx, defs, values, row.id);
  await checkIds(ctx, writes);
  let fieldsChanged = false;
  const changes: Changes = {};
  const fieldChanges = new Map<string, unknown>();
  for (const [key, v] of values) {
    const before = Object.hasOwn(stored, key) ? stored[key] : null;
    if (canonical(before) === canonical(v)) continue;
    fieldsChanged = true;
    changes[key] = { from: before, to: v };
    fieldChanges.set(key, v);
    if (v === null) delete stored[key];
    else stored[key] = v;
  }
  // Never earlier than the stored updatedAt: the row is locked, so it is the last write's
  // (docs/records.md §Times of writes).
  const at = laterIso(isoNow(ctx.now), row.updated_at);
  // The history and the event carry the time the record is stamped with (docs/events.md §Shape).
  const stamped: WriteCtx = { ...ctx, now: Date.parse(at) };
  const current =
    writes.length > 0 ? ((await relationshipValues(ctx, defs, [row.id])).get(row.id) ?? new Map<string, string[]>()) : new Map<string, string[]>();
  const relsChanged = await applyRelationships(ctx, defs, row.id, writes, current, at, changes);
  if (fieldsChanged) {
    row.fields = JSON.stringify(stored);
    await writeValueIndex(ctx.db, defs, [row.id], valueRows(ws, defs, row.id, stored));
  }
  if (fieldsChanged || relsChanged) {
    row.updated_at = at;
    await repo.updateRecord(ctx.db, row.id, { fields: row.fields, updated_at: at });
  }
  const resource = toResource(ctx, defs, row, (await relationshipValues(ctx, defs, [row.id])).get(row.id));
  // A relationship's `to` is as the API shows it (docs/events.md §Shape): an inverse one in its
  // sources' order, not the body's.
  for (const key of Object.keys(changes)) if (defs.relationships.has(key)) changes[key] = { from: changes[key]!.from, to: resource.relationships[key]!.values };
  if (fieldsChanged) await recordFieldChanges(stamped, { recordId: row.id, changes: fieldChanges });
  if (fieldsChanged || relsChanged) await appendEvent(stamped, { type: `${type.objectType}.updated`, object: resource, changes });
  return resource;
}

// A retrieve reads its record as a page does (loadRecords): the record, its definitions version
// and its own relationship rows in one statement, the definitions from the cache while that
// version holds, and the derived relationships (a contact's meetings) alongside, in the same step
// (docs/performance.md §Record reads and writes).
export async function getRecord(ctx: Ctx, input: OfType & { id: string }): Promise<RecordResource> {
  const { type } = input;
  const [resource] = await loadRecords(ctx, { kind: type.objectType, ids: [input.id] });
  if (!resource) throw notFound(type.objectType, input.id);
  return resource;
}

/**
 * One page of a type's records, newest first. Any query key besides limit and offset is a filter
 * (docs/filtering.md); without one the page comes from the ranked listing (docs/pages.md). Either
 * way the page's ids are then read as a member page reads them.
 */
export async function listRecords(ctx: Ctx, input: OfType & { query: Page & Readonly<Record<string, unknown>> }) {
  const { type, query } = input;
  const page = { limit: query.limit, offset: query.offset };
  const filtered = Object.keys(query).some((k) => k !== 'limit' && k !== 'offset');
  const defs = filtered ? await requireDefinitions(ctx, type.objectType) : undefined;
  return agreeingPage(page, async () => {
    const { totalCount, ids } = defs
      ? await filterQuery(ctx, { defs, query, page })
      : await repo.pageRecordIds(ctx.db, ctx.actor.workspaceId, type.objectType, page).then((p) => ({ totalCount: p.total, ids: p.ids }));
    return { data: await loadRecords(ctx, { kind: type.objectType, ids }), totalCount };
  });
}
