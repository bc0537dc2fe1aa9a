// GET /v1/<plural>/definitions (docs/records.md §Definitions): the type's definitions as the API
// shows them. Every field carries id and readOnly; typeConfiguration holds only what applies
// (select fields always have options, multi-valued fields multipleValues: true).
import type { Static } from '@sinclair/typebox';
import { findFieldRow, updateField } from '../definitions/repository.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { writeValueIndex } from './index/repository.ts';
import { valueRows } from './index/values.ts';
import { recordsHolding } from './repository.ts';
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
  const row = await findFieldRow(ctx.db, ws, input.objectType, input.key);
  if (!row) throw new InputError(`${input.objectType} has no custom field "${input.key}"`, 'key');
  const config = JSON.parse(row.config) as Record<string, unknown>;
  if (Boolean(config.archived) === input.archived) return { id: row.id, archived: input.archived };
  if (input.archived) config.archived = true;
  else delete config.archived;
  await updateField(ctx.db, row.id, { config: JSON.stringify(config) });
  if (!input.archived) {
    const defs = await requireDefinitions(ctx, input.objectType);
    for (const r of await recordsHolding(ctx.db, ws, input.objectType, input.key))
      await writeValueIndex(ctx.db, defs, [r.id], valueRows(ws, defs, r.id, JSON.parse(r.fields) as Record<string, unknown>));
  }
  return { id: row.id, archived: input.archived };
}
