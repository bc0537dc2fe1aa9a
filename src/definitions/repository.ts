// SQL of the definitions operators add (docs/records.md §Definitions).
import { holdNamedLock, prepared, type Executor, type Tx } from '../db/index.ts';
import type { FieldDefinitionsTable, ObjectTypesTable, RelationshipDefinitionsTable, SelectOptionsTable } from './tables.ts';

export type FieldRow = FieldDefinitionsTable;
export type OptionRow = SelectOptionsTable;
export type RelationshipRow = RelationshipDefinitionsTable;

export interface CustomDefinitions {
  fields: FieldRow[];
  options: OptionRow[];
  relationships: RelationshipRow[];
}

/** Everything operators defined for one type of one workspace, each kind in its creation order. */
export async function findCustomDefinitions(db: Executor, workspaceId: string, objectType: string): Promise<CustomDefinitions> {
  const [fields, options, relationships] = await Promise.all([
    db
      .selectFrom('field_definitions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('object_type', '=', objectType)
      .orderBy('position')
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
      .orderBy('position')
      .orderBy('id')
      .execute(),
  ]);
  return { fields, options, relationships };
}

const versionOf = prepared((db: Executor, workspaceId: string) =>
  db.selectFrom('definition_versions').select('version').where('workspace_id', '=', workspaceId),
);

/** The version of the workspace's definitions (migration 0017); 0 until a definition is written. */
export async function definitionsVersion(db: Executor, workspaceId: string): Promise<number> {
  const [row] = await versionOf(db, workspaceId);
  return Number(row?.version ?? 0);
}

/** The committed version, read outside the transaction `db` may be; undefined where it cannot be read (src/db/prepared.ts). */
export async function committedDefinitionsVersion(db: Executor, workspaceId: string): Promise<number | undefined> {
  const rows = await versionOf.committed(db, workspaceId);
  return rows === undefined ? undefined : Number(rows[0]?.version ?? 0);
}

// A definition's position is one past the last of its type, so definitions created in the same
// millisecond (one import, one transaction) still list in the order they were made.
async function nextPosition(db: Executor, table: 'field_definitions' | 'relationship_definitions', workspaceId: string, objectType: string): Promise<number> {
  const last = await db
    .selectFrom(table)
    .select((eb) => eb.fn.max('position').as('p'))
    .where('workspace_id', '=', workspaceId)
    .where('object_type', '=', objectType)
    .executeTakeFirst();
  return Number(last?.p ?? -1) + 1;
}

export async function insertField(db: Executor, row: Omit<FieldRow, 'position'>): Promise<void> {
  const position = await nextPosition(db, 'field_definitions', row.workspace_id, row.object_type);
  await db
    .insertInto('field_definitions')
    .values({ ...row, position })
    .execute();
}

export async function insertRelationship(db: Executor, row: Omit<RelationshipRow, 'position'>): Promise<void> {
  const position = await nextPosition(db, 'relationship_definitions', row.workspace_id, row.object_type);
  await db
    .insertInto('relationship_definitions')
    .values({ ...row, position })
    .execute();
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

/**
 * The workspace's custom object types, by slug in code point order: sorted here, not by the
 * database, since a PostgreSQL database's own collation may order text by a language's rules
 * (`a_c` after `ab`) where SQLite compares bytes.
 */
export async function listObjectTypes(db: Executor, workspaceId: string): Promise<ObjectTypeRow[]> {
  const rows = await db.selectFrom('object_types').selectAll().where('workspace_id', '=', workspaceId).execute();
  return rows.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
}

export async function insertObjectType(db: Executor, row: ObjectTypeRow): Promise<void> {
  await db.insertInto('object_types').values(row).execute();
}

export async function updateObjectTypeLabel(db: Executor, workspaceId: string, slug: string, label: string): Promise<void> {
  await db.updateTable('object_types').set({ label }).where('workspace_id', '=', workspaceId).where('slug', '=', slug).execute();
}

/** The workspace's default country for telephone numbers (migration 0055), or null. */
export async function workspaceDefaultCountry(db: Executor, workspaceId: string): Promise<string | null> {
  const row = await db.selectFrom('workspaces').select('default_country').where('id', '=', workspaceId).executeTakeFirst();
  return row?.default_country ?? null;
}

/** Moves the workspace's definitions version, for a change the triggers of migration 0017 do not see. */
export async function bumpDefinitionsVersion(db: Executor, workspaceId: string): Promise<void> {
  await db
    .insertInto('definition_versions')
    .values({ workspace_id: workspaceId, version: 1 })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet((eb) => ({ version: eb('definition_versions.version', '+', 1) })))
    .execute();
}

/**
 * Takes the workspace's definitions for writing until `tx` ends: a second writer waits here, then
 * reads what the first committed (docs/records.md §Definitions).
 */
export function lockDefinitions(tx: Tx, workspaceId: string): Promise<void> {
  return holdNamedLock(tx, `definitions/${workspaceId}`);
}

/**
 * Holds the workspace's definitions as they are until `tx` ends: a definition write under way is
 * waited for, and a later one waits for `tx`; holders of this lock run side by side. Taken by the
 * writes that may put back a record holding an archived field's values (a restore, an import's
 * records) or give a record values of one it did not hold (a merge), before they read the
 * definitions they write with (docs/records.md §Correcting definitions).
 */
export function holdDefinitions(tx: Tx, workspaceId: string): Promise<void> {
  return holdNamedLock(tx, `definitions/${workspaceId}`, 'shared');
}

/** The custom field row of a key (archived ones included). */
export function findFieldRow(db: Executor, workspaceId: string, objectType: string, key: string): Promise<FieldRow | undefined> {
  return db
    .selectFrom('field_definitions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('object_type', '=', objectType)
    .where('key', '=', key)
    .executeTakeFirst();
}

export async function updateField(db: Executor, id: string, set: Partial<Pick<FieldRow, 'label' | 'description' | 'config'>>): Promise<void> {
  await db.updateTable('field_definitions').set(set).where('id', '=', id).execute();
}

export async function updateRelationship(
  db: Executor,
  workspaceId: string,
  objectType: string,
  key: string,
  set: Partial<Pick<RelationshipRow, 'label' | 'description'>>,
): Promise<number> {
  const r = await db
    .updateTable('relationship_definitions')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('object_type', '=', objectType)
    .where('key', '=', key)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Updates an option operators added; 0 for a default option, which has no row. */
export async function updateOption(db: Executor, workspaceId: string, id: string, set: Partial<Pick<OptionRow, 'label' | 'description'>>): Promise<number> {
  const r = await db.updateTable('select_options').set(set).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows);
}
