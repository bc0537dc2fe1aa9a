// GET /v1/<plural>/definitions (docs/records.md §Definitions): the type's definitions as the API
// shows them. Every field carries id and readOnly; typeConfiguration holds only what applies
// (select fields always have options, multi-valued fields multipleValues: true).
import type { Static } from '@sinclair/typebox';
import { findFieldRow, holdDefinitions, lockDefinitions, updateField } from '../definitions/repository.ts';
import { loadDefinitions, type TypeDefinitions } from '../definitions/service.ts';
import type { Executor } from '../db/index.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { writeValueIndex } from './index/repository.ts';
import { type IndexedScalar, indexedScalar, valueRows } from './index/values.ts';
import { type RecordRow, recordsHolding } from './repository.ts';
import { type RecordType, requireDefinitions } from './resource.ts';
import type { Definitions, FieldDefinition, RelationshipDefinition } from './schemas.ts';

export async function getDefinitions(ctx: Ctx, input: { type: RecordType }): Promise<Static<typeof Definitions>> {
  const defs = await requireDefinitions(ctx, input.type.objectType);
  const fieldDefinitions: Record<string, Static<typeof FieldDefinition>> = {};
  for (const [key, f] of defs.fields) {
    fieldDefinitions[key] = {
      id: f.id,
      label: f.label,
      description: f.description,
      valueType: f.valueType,
      readOnly: f.readOnly,
      typeConfiguration: {
        ...(f.options ? { options: f.options.map((o) => ({ id: o.id, label: o.label, description: o.description })) } : {}),
        ...(f.currency ? { currency: f.currency } : {}),
        ...(f.unique ? { unique: true } : {}),
        ...(f.multipleValues ? { multipleValues: true } : {}),
        ...(f.handleService ? { handleService: f.handleService } : {}),
      },
    };
  }
  const relationshipDefinitions: Record<string, Static<typeof RelationshipDefinition>> = {};
  for (const [key, r] of defs.relationships) {
    relationshipDefinitions[key] = {
      id: r.id,
      label: r.label,
      description: r.description,
      cardinality: r.cardinality === 'has_one' ? 'HAS_ONE' : 'HAS_MANY',
      objectType: r.objectType,
    };
  }
  return { objectType: defs.objectType, fieldDefinitions, relationshipDefinitions };
}

/**
 * Archives a custom field (hidden from definitions, responses, filters and writes; the stored
 * values stay) or brings it back. Bringing it back indexes its values again, since writes made
 * while it was archived indexed the records without it.
 */
export async function setArchived(ctx: WriteCtx, input: { objectType: string; key: string; archived: boolean }): Promise<{ id: string; archived: boolean }> {
  const ws = ctx.actor.workspaceId;
  // Under the definitions lock, as every definition write (definitionWrite, src/definitions/service.ts).
  await lockDefinitions(ctx.db, ws);
  const row = await findFieldRow(ctx.db, ws, input.objectType, input.key);
  if (!row) {
    // The type is named only when the key is missing, so that the common case reads one row.
    const defs = await loadDefinitions(ctx, { objectType: input.objectType });
    if (!defs) throw new InputError(`unknown object type "${input.objectType}"`, 'type');
    const why = defs.relationships.has(input.key) ? ': it names a relationship, and only fields are archived' : '';
    throw new InputError(`${input.objectType} has no custom field "${input.key}"${why}`, 'key');
  }
  const config = JSON.parse(row.config) as Record<string, unknown>;
  if (Boolean(config.archived) === input.archived) return { id: row.id, archived: input.archived };
  if (input.archived) config.archived = true;
  else delete config.archived;
  await updateField(ctx.db, row.id, { config: JSON.stringify(config) });
  if (!input.archived) {
    const defs = await requireDefinitions(ctx, input.objectType);
    // Locked as an update locks its record: an update that read the definitions while the field
    // was archived, and so indexes its record without it, commits before these are read and
    // indexed; one that comes later reads the definitions once this commits.
    const holding = (await recordsHolding(ctx.db, ws, input.objectType, input.key, true)).map((r) => ({
      id: r.id,
      fields: JSON.parse(r.fields) as Record<string, unknown>,
    }));
    const def = defs.fields.get(input.key);
    const shared = def?.unique ? sharedValue(input.key, def.valueType, holding) : undefined;
    if (shared)
      throw new InputError(
        `"${input.key}" is unique, and ${input.objectType} records ${shared.ids.join(' and ')} both hold ${JSON.stringify(shared.value)} (written before a restore checked archived fields): move one of them to the trash, then unarchive`,
        'key',
      );
    for (const r of holding) await writeValueIndex(ctx.db, defs, [r.id], valueRows(ws, defs, r.id, r.fields));
  }
  return { id: row.id, archived: input.archived };
}

/**
 * The definitions a write putting back `row` (a restore from the trash) writes it with. A row
 * holding values of an archived field holds the definitions (`holdDefinitions`) and reads them
 * again: an `unarchive` under way commits first, and the write then indexes the field's values; a
 * later one waits for the write, and then finds the record among those it indexes
 * (docs/records.md §Correcting definitions).
 */
export async function definitionsToPutBack(ctx: WriteCtx, row: RecordRow): Promise<TypeDefinitions> {
  const defs = await requireDefinitions(ctx, row.kind);
  if (!Object.keys(JSON.parse(row.fields) as object).some((key) => defs.archived.has(key))) return defs;
  await holdDefinitions(ctx.db, row.workspace_id);
  return requireDefinitions(ctx, row.kind);
}

/** An index value in the form a unique field's check compares: text and numbers kept apart. */
export function uniqueKey(indexed: IndexedScalar): string {
  return indexed.text !== undefined ? `t${indexed.text}` : `n${indexed.num}`;
}

/**
 * A unique field's value in the form its check compares, the value index's (indexedScalar: text
 * folded, an EMAIL as its key, numbers as numbers); undefined for any other.
 */
function uniqueForm(valueType: string, x: unknown): string | undefined {
  const indexed = indexedScalar(valueType, x);
  return indexed === undefined ? undefined : uniqueKey(indexed);
}

/**
 * A value of field `key` that two of `records` hold, compared as a unique field's check compares
 * them. A unique field is checked on writes only while it is active, so records written before
 * the check covered archived fields may share one.
 */
function sharedValue(
  key: string,
  valueType: string,
  records: readonly { id: string; fields: Record<string, unknown> }[],
): { value: unknown; ids: [string, string] } | undefined {
  const seen = new Map<string, string>();
  for (const r of records) {
    const v = r.fields[key];
    for (const x of Array.isArray(v) ? v : [v]) {
      const form = uniqueForm(valueType, x);
      if (form === undefined) continue;
      const other = seen.get(form);
      if (other !== undefined && other !== r.id) return { value: x, ids: [other, r.id] };
      seen.set(form, r.id);
    }
  }
  return undefined;
}

/**
 * The records of the type holding each value of archived field `key`, by the value's uniqueKey.
 * The value index does not hold an archived field's values (a write since the archive leaves them
 * out), so the records holding it are read: a restore and an import ask, for an archived unique field
 * (docs/trash.md §Restore, docs/import.md §Rules).
 */
export async function archivedValueHolders(
  db: Executor,
  workspaceId: string,
  kind: string,
  field: { key: string; valueType: string },
): Promise<Map<string, string[]>> {
  const holders = new Map<string, string[]>();
  for (const r of await recordsHolding(db, workspaceId, kind, field.key)) {
    const v = (JSON.parse(r.fields) as Record<string, unknown>)[field.key];
    for (const x of Array.isArray(v) ? v : [v]) {
      const form = uniqueForm(field.valueType, x);
      if (form === undefined) continue;
      const ids = holders.get(form) ?? [];
      if (!ids.includes(r.id)) ids.push(r.id);
      holders.set(form, ids);
    }
  }
  return holders;
}

/** Whether a record of the type other than `exceptId` holds `value` in archived field `key` (archivedValueHolders). */
export async function archivedValueTaken(
  db: Executor,
  workspaceId: string,
  kind: string,
  field: { key: string; valueType: string },
  value: unknown,
  exceptId: string,
): Promise<boolean> {
  const form = uniqueForm(field.valueType, value);
  if (form === undefined) return false;
  return ((await archivedValueHolders(db, workspaceId, kind, field)).get(form) ?? []).some((id) => id !== exceptId);
}
