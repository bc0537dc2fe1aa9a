// Import kinds for accounts, contacts, opportunities, notes, tasks and records of custom object
// types (docs/import.md). check() verifies the shape and the system names without the
// database; upsert() checks each value against the workspace's definitions with the API's own
// checker, writes rows in multi-row batches, ranks new records and rewrites their value index;
// link() resolves references by externalId once every kind has its ids.
import { SYSTEM_CATALOGUES } from '../definitions/catalogue.ts';
import { CUSTOM_KEY, type TypeDefinitions } from '../definitions/service.ts';
import { ImportError, type ImportContext, type ImportItem, type ImportKind, onlyFields, upsertByExternalId } from '../import/kind.ts';
import { chunks, rankInsert, rankLoadEnd, rankLoadKeys } from '../db/index.ts';
import { AppError, InputError } from '../lib/errors.ts';
import { laterIso } from '../lib/dates.ts';
import { isoNow } from '../lib/ids.ts';
import { RECORD_TYPES, type RecordType, requireDefinitions } from './resource.ts';
import { fieldChanges, logBatch, type Updated } from './import-changes.ts';
import { checkUniqueValues, recheckUniqueValues, type UniqueValue, uniqueValues } from './import-unique.ts';
import { definitionsOf, link, linkEarly, type RecordInput, stateOf } from './import-links.ts';
import { existingOf, lookUpExisting, writtenAsMeant } from './import-existing.ts';
import { recordReferences } from './import-references.ts';
import { lockRecords } from './repository.ts';
import { valueRows } from './index/values.ts';
import * as repo from './repository.ts';
import * as importRepo from './import-repository.ts';
import { rankFacetsAfterLoad } from './index/facets.ts';
import { startBulkLoad, writeValueIndex } from './index/repository.ts';
import type { RecordKind } from './tables.ts';
import { checkFieldValues, holdsNone } from './write-fields.ts';
import { longerThan } from '../lib/chars.ts';

/** Records whose rows are built and written together; the import's transaction holds them all. Tests make it smaller. */
export const IMPORT_BATCH = { size: 5000 };
/**
 * When an import of one type builds the value indexes after its rows (docs/import.md
 * §Speed): at least `min` records, and at least `share` of the records table's rows. Tests force
 * either way.
 */
export const BULK_LOAD = { min: 10_000, share: 1 };

/** System names of earlier releases and what they became (docs/records.md §Import). */
const RENAMED: Record<RecordKind, Record<string, string>> = {
  account: { $domain: '$website (a list)', $address: '$primaryAddress', $phone: 'phone', $employees: 'employees' },
  contact: { $phone: 'phone', $title: 'title', $address: 'address', $linkedin: 'linkedin', $owner: 'owner' },
  opportunity: { $amount: 'amount', $closeDate: 'close_date', $description: 'description', $contacts: 'contacts' },
  task: {},
  note: {},
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function object(v: unknown, field: string): Record<string, unknown> {
  if (!isObject(v)) throw new InputError('must be an object', field);
  return v;
}

/**
 * `kind`: a system type, or the slug of a custom object type (which has no system names). `at` is
 * the member's path, built only for an error: a million objects are checked before any is written.
 */
function checkKey(kind: string, name: string, at: () => string, system: Readonly<Record<string, unknown>>, what: string): void {
  if (name.startsWith('$')) {
    const became = Object.hasOwn(RENAMED, kind) ? RENAMED[kind as RecordKind][name] : undefined;
    if (became) throw new InputError(`"${name}" is no longer a system ${what} of ${kind}: it is now ${became}`, at());
    if (!Object.hasOwn(system, name)) throw new InputError(`is not a system ${what} of ${kind} (custom ones use a bare slug)`, at());
  } else if (!CUSTOM_KEY.test(name)) {
    throw new InputError('custom names are slugs: a lower-case letter, then letters, digits or _ (at most 63)', at());
  }
}

export const MEMBERS = ['fields', 'archivedFields', 'relationships'];
const NO_CATALOGUE = { fields: {}, relationships: {} };

/** `fields` or `archivedFields` of a line: `{value, valueType}` by key. Archived fields are custom ones only. */
function fieldsOf(kind: string, raw: Record<string, unknown>, member: 'fields' | 'archivedFields', system: Record<string, unknown>): RecordInput['fields'] {
  const fields: RecordInput['fields'] = {};
  const rawFields = object(raw[member] ?? {}, member);
  for (const name of Object.keys(rawFields)) {
    const at = () => `${member}.${name}`;
    if (member === 'archivedFields' && name.startsWith('$')) throw new InputError('is a system field, which is never archived', at());
    checkKey(kind, name, at, system, 'field');
    const e = rawFields[name];
    if (!isObject(e)) throw new InputError('must be an object', at());
    for (const k of Object.keys(e))
      if (k !== 'value' && k !== 'valueType') throw new InputError('is not a known member (use value and valueType)', `${at()}.${k}`);
    if (!('value' in e)) throw new InputError('is required (null when unset)', `${at()}.value`);
    if (e.valueType !== undefined && typeof e.valueType !== 'string') throw new InputError('must be a string', `${at()}.valueType`);
    fields[name] = { value: e.value, valueType: e.valueType };
  }
  return fields;
}

export function check(kind: string, raw: Record<string, unknown>, members: string[] = MEMBERS): RecordInput {
  onlyFields(raw, members);
  const catalogue = SYSTEM_CATALOGUES[kind] ?? NO_CATALOGUE;
  const fields = fieldsOf(kind, raw, 'fields', catalogue.fields);
  const archivedFields = raw.archivedFields === undefined ? undefined : fieldsOf(kind, raw, 'archivedFields', {});
  const relationships: RecordInput['relationships'] = {};
  const rawRelationships = object(raw.relationships ?? {}, 'relationships');
  for (const name of Object.keys(rawRelationships)) {
    const at = () => `relationships.${name}`;
    checkKey(kind, name, at, catalogue.relationships, 'relationship');
    const e = rawRelationships[name];
    if (!isObject(e)) throw new InputError('must be an object', at());
    for (const k of Object.keys(e))
      if (k !== 'objectType' && k !== 'values' && k !== 'cardinality') throw new InputError('is not a known member', `${at()}.${k}`);
    if (e.objectType !== undefined && typeof e.objectType !== 'string') throw new InputError('must be a string', `${at()}.objectType`);
    const values = e.values;
    if (!Array.isArray(values)) throw new InputError('must be an array of externalIds', `${at()}.values`);
    // Most hold one or two values, compared directly; a set only for longer lists.
    const seen = values.length > 8 ? new Set<string>() : undefined;
    for (let i = 0; i < values.length; i++) {
      const v: unknown = values[i];
      if (typeof v !== 'string' || v.length < 1 || longerThan(v, 255))
        throw new InputError('must be an externalId, a string of 1 to 255 characters', `${at()}.values[${i}]`);
      if (seen ? seen.has(v) : values.indexOf(v) < i) throw new InputError(`"${v}" appears twice`, `${at()}.values[${i}]`);
      seen?.add(v);
    }
    relationships[name] = { objectType: e.objectType, values: values as string[] };
  }
  return { fields, ...(archivedFields ? { archivedFields } : {}), relationships };
}

/**
 * The stored values of one item, checked against the definitions as an API write is (read-only
 * fields may be set); `archivedFields` against the archived fields, whose values are kept hidden.
 */
function values(defs: TypeDefinitions, item: ImportItem<RecordInput>): Record<string, unknown> {
  const active = valuesOf(defs, item, 'fields', defs.archived);
  if (Object.keys(item.value.archivedFields ?? {}).length === 0) return active;
  return { ...active, ...valuesOf({ ...defs, fields: defs.archived }, item, 'archivedFields', defs.fields) };
}

/**
 * An updated record's values: the line's, and, when the line has no `archivedFields` (a CSV row
 * never has), the record's values of archived fields, which the operator does not see and the
 * line does not speak of (docs/import.md §`account`, `contact`, `opportunity`).
 */
function keptArchived(
  defs: TypeDefinitions,
  item: ImportItem<RecordInput>,
  before: Record<string, unknown>,
  checked: Record<string, unknown>,
): Record<string, unknown> {
  if (item.value.archivedFields !== undefined) return checked;
  const kept = Object.entries(before).filter(([key, v]) => v !== null && defs.archived.has(key) && !Object.hasOwn(checked, key));
  return kept.length === 0 ? checked : { ...checked, ...Object.fromEntries(kept) };
}

function valuesOf(
  defs: TypeDefinitions,
  item: ImportItem<RecordInput>,
  member: 'fields' | 'archivedFields',
  other: TypeDefinitions['fields'],
): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [key, { value, valueType }] of Object.entries(item.value[member] ?? {})) {
    const def = defs.fields.get(key);
    if (!def) {
      const what = member === 'fields' ? 'a field' : 'an archived field';
      // A field archived or brought back since the file was written (or while a batched import ran).
      const why = !other.has(key)
        ? 'operators define custom fields first'
        : member === 'fields'
          ? 'it is archived, and its values go under archivedFields'
          : 'it is shown, and its values go under fields';
      throw new ImportError(item.line, `${member}.${key}`, `is not ${what} of ${defs.objectType}; ${why}`);
    }
    if (valueType !== undefined && valueType !== def.valueType) throw new ImportError(item.line, `${member}.${key}.valueType`, `must be ${def.valueType}`);
    raw[key] = value;
  }
  try {
    // Labels as people write them, as a CSV cell's (docs/import.md §Value types). A line replaces
    // the record's fields whole and need not hold the required ones, so `null` for one is taken as
    // its absence is (docs/records.md §Import).
    const checked = checkFieldValues(defs, raw, 'fields', 'loose', holdsNone);
    return Object.fromEntries([...checked].filter(([, v]) => v !== null));
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const field = (err.param ?? 'fields').replace(/^fields(\.[^.[]+)?/, (_all, key: string | undefined) => (key ? `${member}${key}.value` : member));
    throw new ImportError(item.line, field, err.message);
  }
}

/**
 * Phase 1 for items of one type: checks their values, upserts the rows by externalId in
 * multi-row batches, ranks the new ones and rewrites their value index (writeValueIndex, as the
 * API's writes do). Ids are registered under the type's name.
 */
export async function upsertOfType(
  ctx: ImportContext,
  owner: string,
  type: RecordType,
  defs: TypeDefinitions,
  items: ImportItem<RecordInput>[],
): Promise<void> {
  const ws = ctx.actor.workspaceId;
  const kind = type.objectType;
  const created: { ts: string; id: string }[] = [];
  await lockRecords(ctx.db, ws, kind);
  const bulk = await bulkLoadOf(ctx, kind, owner);
  // A bulk load's type had no records: none to look up.
  const existing = bulk ? new Map<string, string>() : await existingOf(ctx, owner, kind, items);
  await writeBatches(ctx, type, defs, items, created, existing, bulk);
  if (bulk) rankLoadKeys(ctx.db, repo.RECORDS, [ws, kind], created);
  else await rankInsert(ctx.db, repo.RECORDS, [ws, kind], created);
}

/**
 * Whether this import bulk-loads the type `kind` (docs/import.md §Speed), decided at the type's
 * first chunk for all of them: a load of at least `BULK_LOAD.min` new records that at least
 * doubles the tables (counting the type's objects in the whole import), into a type without
 * records, in one transaction. Every later chunk of the type then holds new records too: the
 * type had none, and an import's externalIds are unique per type. The load starts here and ends
 * with the kind's upserts (`finishKind`).
 */
async function bulkLoadOf(ctx: ImportContext, kind: string, owner: string): Promise<boolean> {
  const state = stateOf(ctx);
  const decided = state.loads.get(kind);
  if (decided !== undefined) return decided !== null;
  const total = (owner === kind ? ctx.total?.(owner) : ctx.total?.(owner, kind)) ?? 0;
  const bulk =
    ctx.bulkLoad !== false &&
    total >= BULK_LOAD.min &&
    total >= BULK_LOAD.share * (await repo.recordCount(ctx.db)) &&
    !(await repo.hasRecords(ctx.db, ctx.actor.workspaceId, kind));
  state.loads.set(kind, bulk ? { kind: owner, load: await startBulkLoad(ctx.db, kind, isoNow(ctx.now)) } : null);
  if (bulk) state.allNew.add(kind);
  return bulk;
}

/**
 * Ends the bulk loads of the kind `owner`'s types, after their last rows: postings packed, the
 * indexes built, and the listing and the ranked values' sets counted from the rows at once, with
 * statements nobody waits for, so that the links are resolved while the writer thread still
 * builds the indexes (docs/import.md §Speed). In a transaction that takes its locks late the
 * listing and sets are counted at its end instead, from the keys noted chunk by chunk
 * (`rankLoadKeys`). Counting the new keys one by one read the
 * partition's total first, which waited for every index build. When two types of a kind load at
 * once, the second load's packs take the postings of both, and the first load's build makes the
 * indexes both dropped: each type's sets are still counted from its rows.
 */
export async function finishKind(ctx: ImportContext, owner: string): Promise<void> {
  await writtenAsMeant(ctx, true);
  for (const [kind, entry] of stateOf(ctx).loads) {
    if (entry === null || entry.kind !== owner) continue;
    await entry.load.end();
    await rankLoadEnd(ctx.db, repo.RECORDS, [ctx.actor.workspaceId, kind]);
    await rankFacetsAfterLoad(ctx.db, entry.load.facets);
  }
}

async function writeBatches(
  ctx: ImportContext,
  type: RecordType,
  defs: TypeDefinitions,
  items: ImportItem<RecordInput>[],
  created: { ts: string; id: string }[],
  existing: Map<string, string>,
  bulk: boolean,
): Promise<void> {
  const ws = ctx.actor.workspaceId;
  const kind = type.objectType;
  const at = isoNow(ctx.now);
  // In batches, so that a large import never holds every row of the value and trigram indexes in
  // memory at once; all of them in the import's one transaction.
  for (const batch of chunks(items, IMPORT_BATCH.size)) {
    const rows: repo.RecordRow[] = [];
    // Existing records without an externalId: no upsert by externalId finds them, their rows are locked.
    const byId: repo.RecordRow[] = [];
    const indexRows: ReturnType<typeof valueRows> = [];
    const updated: string[] = [];
    const logCreated: { row: repo.RecordRow; stored: Record<string, unknown> }[] = [];
    const logUpdated: Updated[] = [];
    const unique: UniqueValue[] = [];
    // The batch's existing records, by the line that rewrites them (checkUniqueValues).
    const rewritten = new Map<string, number>();
    // The rows of the batch's existing records, for what the import changes of them.
    const olds = bulk
      ? new Map<string, repo.RecordRow>()
      : await repo.recordRows(
          ctx.db,
          batch.flatMap((i) => existing.get(i.externalId) ?? []),
          { lock: true },
        );
    const row = (item: ImportItem<RecordInput>, id: string, stored: Record<string, unknown>, old?: repo.RecordRow) => {
      for (const r of valueRows(ws, defs, id, stored)) indexRows.push(r);
      const written = {
        id,
        workspace_id: ws,
        kind,
        // A record named by its id (one without an externalId, docs/import.md §Export) keeps none.
        external_id: old ? old.external_id : item.externalId,
        fields: JSON.stringify(stored),
        created_at: old?.created_at ?? at,
        // An existing record's updatedAt never moves backwards (docs/records.md §Times of writes):
        // its row is locked.
        updated_at: old ? laterIso(at, old.updated_at) : at,
      };
      (written.external_id === null ? byId : rows).push(written);
      return written;
    };
    const upsert = upsertByExternalId(ctx, batch, {
      object: kind,
      idKind: type.idKind,
      find: async () => existing,
      update: (item, _old, id) => {
        rewritten.set(id, item.line);
        const checked = values(defs, item);
        const old = olds.get(id);
        // Found by its externalId before the batch, and gone now: deleted by another writer meanwhile.
        if (!old) throw new ImportError(item.line, 'externalId', `the ${kind} "${item.externalId}" was deleted while this import ran; import again`);
        const before = JSON.parse(old.fields) as Record<string, unknown>;
        const stored = keptArchived(defs, item, before, checked);
        // Kept values are still the record's: unique against every other record and line.
        unique.push(...uniqueValues(defs, item.line, id, stored));
        const changed = fieldChanges(before, stored);
        // An item that changes no field is not written: its record keeps its row, index rows and updatedAt.
        if (!changed) return;
        logUpdated.push({ row: row(item, id, stored, old), stored, ...changed });
        updated.push(id);
      },
      insert: (item, id) => {
        const stored = values(defs, item);
        unique.push(...uniqueValues(defs, item.line, id, stored));
        logCreated.push({ row: row(item, id, stored), stored });
        created.push({ ts: at, id });
      },
    });
    // A line refused for another reason is named only when no line before it takes a value another
    // record holds: the first refused line is named whatever the chunks (docs/import.md §Rules).
    await upsert.catch(async (err: unknown) => {
      if (err instanceof ImportError && unique.length > 0) await checkUniqueValues(ctx, kind, unique, !bulk, rewritten);
      throw err;
    });
    if (unique.length > 0) await checkUniqueValues(ctx, kind, unique, !bulk, rewritten);
    // Existing and new rows alike: one multi-row upsert per chunk; a bulk load's are all new.
    const written = bulk ? undefined : await importRepo.upsertRecords(ctx.db, rows);
    if (bulk) await importRepo.insertRecords(ctx.db, rows);
    await importRepo.updateRecordFields(ctx.db, byId);
    // A record created just now has no index rows yet: only updated ones have rows to replace.
    await writeValueIndex(ctx.db, defs, updated, indexRows);
    await logBatch(ctx, defs, logCreated, logUpdated);
    if (bulk) await linkEarly(ctx, kind, defs, batch);
    if (written) {
      const lines = new Map(batch.map((i) => [i.externalId, i.line]));
      const meant = rows.map((r) => ({ id: r.id, externalId: r.external_id as string, line: lines.get(r.external_id as string) ?? 0 }));
      const { unchecked } = stateOf(ctx);
      unchecked.push({ kind, written, meant });
      // In one transaction the check may wait until the kind's last chunk (`finishKind`): waiting
      // here for the statements to run would stop the next chunk being built meanwhile
      // (src/db/pipeline.ts). A chunk that commits on its own is checked before it does, and a few
      // chunks at most wait, so that memory holds a few chunks' ids.
      await writtenAsMeant(ctx, !ctx.bulkLoad || unchecked.length > 4);
    }
  }
}

function recordKind(kind: RecordKind): ImportKind<RecordInput> {
  return {
    object: kind,
    check: (raw) => check(kind, raw),
    lookup: (ctx, externalIds) => repo.recordsByExternalId(ctx.db, ctx.actor.workspaceId, kind, externalIds),
    references: (ctx, item) => recordReferences(ctx, kind, item),
    // In one transaction the type's first chunk looks them up, unless it bulk-loads (`upsertOfType`).
    ahead: (ctx) => (ctx.bulkLoad ? Promise.resolve() : lookUpExisting(ctx, kind, kind)),
    upsert: async (ctx, items) => upsertOfType(ctx, kind, RECORD_TYPES[kind], (await definitionsOf(ctx, kind)) ?? (await requireDefinitions(ctx, kind)), items),
    finish: (ctx) => finishKind(ctx, kind),
    link: (ctx, items) => link(kind, ctx, items),
    underLocks: (ctx) => recheckUniqueValues(ctx, (type) => type === kind),
  };
}

export const accountKind = recordKind('account');
export const contactKind = recordKind('contact');
export const opportunityKind = recordKind('opportunity');
export const noteKind = recordKind('note');
export const taskKind = recordKind('task');
