// SQL of the definitions operators add (docs/records.md §Definitions).
import type { Executor } from '../db/types.ts';
import type { FieldDefinitionsTable, ObjectTypesTable, RelationshipDefinitionsTable, SelectOptionsTable } from './tables.ts';

export type FieldRow = FieldDefinitionsTable;
export type OptionRow = SelectOptionsTable;
export type RelationshipRow = RelationshipDefinitionsTable;

export interface CustomDefinitions {
  fields: FieldRow[];
  options: OptionRow[];
  relationships: RelationshipRow[];
}

/** Everything operators defined for one type of one workspace; options in their order. */
export async function findCustomDefinitions(db: Executor, workspaceId: string, objectType: string): Promise<CustomDefinitions> {
  const [fields, options, relationships] = await Promise.all([
    db
      .selectFrom('field_definitions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('object_type', '=', objectType)
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('select_options')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('object_type', '=', objectType)
      .orderBy('field_key')
      .orderBy('position')
      .execute(),
    db
      .selectFrom('relationship_definitions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('object_type', '=', objectType)
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
  ]);
  return { fields, options, relationships };
}

export async function insertField(db: Executor, row: FieldRow): Promise<void> {
  await db.insertInto('field_definitions').values(row).execute();
}

export async function insertRelationship(db: Executor, row: RelationshipRow): Promise<void> {
  await db.insertInto('relationship_definitions').values(row).execute();
}

export async function insertOption(db: Executor, row: Omit<OptionRow, 'position'>): Promise<void> {
  const last = await db
    .selectFrom('select_options')
    .select((eb) => eb.fn.max('position').as('p'))
    .where('workspace_id', '=', row.workspace_id)
    .where('object_type', '=', row.object_type)
    .where('field_key', '=', row.field_key)
    .executeTakeFirst();
  await db
    .insertInto('select_options')
    .values({ ...row, position: Number(last?.p ?? -1) + 1 })
    .execute();
}

export type ObjectTypeRow = ObjectTypesTable;

export function findObjectType(db: Executor, workspaceId: string, slug: string): Promise<ObjectTypeRow | undefined> {
  return db.selectFrom('object_types').selectAll().where('workspace_id', '=', workspaceId).where('slug', '=', slug).executeTakeFirst();
}

/** The workspace's custom object types, by slug. */
export function listObjectTypes(db: Executor, workspaceId: string): Promise<ObjectTypeRow[]> {
  return db.selectFrom('object_types').selectAll().where('workspace_id', '=', workspaceId).orderBy('slug').execute();
}

export async function insertObjectType(db: Executor, row: ObjectTypeRow): Promise<void> {
  await db.insertInto('object_types').values(row).execute();
}
