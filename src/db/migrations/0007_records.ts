import type { Kysely } from 'kysely';
import { defineRank, rankRebuildAll } from '../rank/index.ts';

// Definitions as data, the value index of records, and ranked record listings (docs/records.md,
// docs/pages.md). Existing records keep their rows; 0008 converts their values to the new field
// names and fills the value index.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('field_definitions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('value_type', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('field_definitions_key', ['workspace_id', 'object_type', 'key'])
    .execute();

  await db.schema
    .createTable('select_options')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('field_key', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addUniqueConstraint('select_options_label', ['workspace_id', 'object_type', 'field_key', 'label'])
    .execute();

  await db.schema
    .createTable('relationship_definitions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('cardinality', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('relationship_definitions_key', ['workspace_id', 'object_type', 'key'])
    .execute();

  await db.schema
    .createTable('record_values')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('value_text', 'text')
    .addColumn('value_num', 'double precision')
    .addColumn('record_id', 'text', (c) => c.notNull())
    .execute();
  // Equality, prefixes and ranges of one field, and the records holding a value (e-mail → contact).
  await db.schema.createIndex('record_values_text').on('record_values').columns(['workspace_id', 'object_type', 'field', 'value_text', 'record_id']).execute();
  await db.schema.createIndex('record_values_num').on('record_values').columns(['workspace_id', 'object_type', 'field', 'value_num', 'record_id']).execute();
  // Rewriting a record's values.
  await db.schema.createIndex('record_values_record').on('record_values').columns(['record_id', 'field']).execute();

  // Record listings: newest first per workspace and type, read at any offset (docs/pages.md).
  await db.schema.createIndex('records_listing').on('records').columns(['workspace_id', 'kind', 'created_at', 'id']).execute();
  // Inverse relationships are read by target and key.
  await db.schema.createIndex('entity_relationships_inverse').on('entity_relationships').columns(['target_id', 'name', 'source_id']).execute();
  await rankRebuildAll(db, defineRank({ name: 'records', table: 'records', by: ['workspace_id', 'kind'], ts: 'created_at', id: 'id' }));
}
