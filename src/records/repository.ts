// Records and their relationships: the reads behind list memberships and the writes of import.
import type { Config } from '../config.ts';
import type { Executor } from '../db/types.ts';
import { chunks } from '../db/chunks.ts';
import { httpLink } from '../lib/links.ts';
import { RECORD_DEFS } from './definitions.ts';
import type { EntityRelationshipsTable, RecordKind } from './tables.ts';

export type RelationshipRow = EntityRelationshipsTable;

export interface Entity {
  id: string;
  createdAt: string;
  updatedAt: string | null;
  httpLink: string | null;
  externalId: string | null;
  fields: Record<string, { value: unknown; valueType: string }>;
  relationships: Record<string, { cardinality: 'has_one' | 'has_many'; objectType: string; values: string[] }>;
}

/** Replaces every relationship of the given sources by `rows` (re-imports replace, never merge). */
export async function replaceRelationships(tx: Executor, sourceIds: string[], rows: RelationshipRow[]): Promise<void> {
  for (const part of chunks(sourceIds)) await tx.deleteFrom('entity_relationships').where('source_id', 'in', part).execute();
  // 5 values a row.
  for (const part of chunks(rows, 1000)) await tx.insertInto('entity_relationships').values(part).execute();
}

// Lookups by id filter workspace and kind in code: given `workspace_id = ? AND kind = ?` too,
// SQLite (without statistics) prefers the (workspace, kind, external_id) index and scans every
// record of the workspace instead of probing the primary key.

/** Which of `ids` are records of this kind in this workspace. */
export async function existingRecordIds(db: Executor, workspaceId: string, kind: RecordKind, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of chunks(ids)) {
    const rows = await db.selectFrom('records').select(['id', 'workspace_id', 'kind']).where('id', 'in', part).execute();
    for (const r of rows) if (r.workspace_id === workspaceId && r.kind === kind) found.add(r.id);
  }
  return found;
}

/** The records of `ids` as API entities, in the order of `ids` (missing ones are left out). */
export async function loadEntities(db: Executor, config: Config, workspaceId: string, kind: RecordKind, ids: string[]): Promise<Entity[]> {
  if (ids.length === 0) return [];
  const def = RECORD_DEFS[kind];
  const [rows, rels] = await Promise.all([
    db.selectFrom('records').selectAll().where('id', 'in', ids).execute(),
    db.selectFrom('entity_relationships').select(['source_id', 'name', 'target_id']).where('source_id', 'in', ids).orderBy('source_id').orderBy('name').orderBy('position').execute(),
  ]);
  const relsBySource = new Map<string, Map<string, string[]>>();
  for (const r of rels) {
    let byName = relsBySource.get(r.source_id);
    if (!byName) relsBySource.set(r.source_id, (byName = new Map()));
    const values = byName.get(r.name);
    if (values) values.push(r.target_id);
    else byName.set(r.name, [r.target_id]);
  }
  const byId = new Map(rows.filter((r) => r.workspace_id === workspaceId && r.kind === kind).map((r) => [r.id, r]));
  const out: Entity[] = [];
  for (const id of ids) {
    const r = byId.get(id);
    if (!r) continue;
    const mine = relsBySource.get(id);
    const relationships: Entity['relationships'] = {};
    for (const [name, rel] of Object.entries(def.relationships)) {
      relationships[name] = { cardinality: rel.cardinality, objectType: rel.objectType, values: mine?.get(name) ?? [] };
    }
    out.push({
      id: r.id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      httpLink: httpLink(config, def.plural, r.id),
      externalId: r.external_id,
      fields: JSON.parse(r.fields) as Entity['fields'],
      relationships,
    });
  }
  return out;
}
