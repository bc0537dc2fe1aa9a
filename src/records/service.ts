// Records as the API shows them (the entity shape). Records are written by import (import.ts);
// the lists read them as members.
import type { Ctx } from '../lib/context.ts';
import { RECORD_DEFS } from './definitions.ts';
import * as repo from './repository.ts';
import type { RecordKind } from './tables.ts';

export interface Entity {
  id: string;
  createdAt: string;
  updatedAt: string | null;
  httpLink: string | null;
  externalId: string | null;
  fields: Record<string, { value: unknown; valueType: string }>;
  relationships: Record<string, { cardinality: 'has_one' | 'has_many'; objectType: string; values: string[] }>;
}

export function toResource(ctx: Ctx, row: repo.RecordRow, relationships: Map<string, string[]> | undefined): Entity {
  const def = RECORD_DEFS[row.kind];
  const rels: Entity['relationships'] = {};
  for (const [name, rel] of Object.entries(def.relationships)) {
    rels[name] = { cardinality: rel.cardinality, objectType: rel.objectType, values: relationships?.get(name) ?? [] };
  }
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    httpLink: ctx.links.http(def.plural, row.id),
    externalId: row.external_id,
    fields: JSON.parse(row.fields) as Entity['fields'],
    relationships: rels,
  };
}

/** The records of `ids` of this kind in ctx's workspace, in the order of `ids` (others are left out). */
export async function loadEntities(ctx: Ctx, input: { kind: RecordKind; ids: string[] }): Promise<Entity[]> {
  if (input.ids.length === 0) return [];
  const { rows, relationships } = await repo.loadRecords(ctx.db, ctx.actor.workspaceId, input.kind, input.ids);
  const out: Entity[] = [];
  for (const id of input.ids) {
    const row = rows.get(id);
    if (row) out.push(toResource(ctx, row, relationships.get(id)));
  }
  return out;
}
