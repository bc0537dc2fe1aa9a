// GET /v1/<plural>/definitions (docs/records.md §Definitions): the type's definitions as the API
// shows them. Every field carries id and readOnly; typeConfiguration holds only what applies
// (select fields always have options, multi-valued fields multipleValues: true).
import type { Static } from '@sinclair/typebox';
import type { Ctx } from '../lib/context.ts';
import { type EntityType, requireDefinitions } from './entities.ts';
import type { Definitions, FieldDefinition, RelationshipDefinition } from './entity-schemas.ts';

export async function getDefinitions(ctx: Ctx, type: EntityType): Promise<Static<typeof Definitions>> {
  const defs = await requireDefinitions(ctx, type.objectType);
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
