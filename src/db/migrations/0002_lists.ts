import type { Kysely } from 'kysely';

// Records (accounts, contacts, opportunities), the generic relationships table shared with
// messages, lists and their members. Counters are kept so that totalCount never scans.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('records_workspace_kind_external', ['workspace_id', 'kind', 'external_id'])
    .execute();

  // One row per related entity; `position` keeps the order of has_many values.
  await db.schema
    .createTable('entity_relationships')
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('entity_relationships_pk', ['source_id', 'name', 'position'])
    .execute();
  await db.schema.createIndex('entity_relationships_target').on('entity_relationships').column('target_id').execute();

  await db.schema
    .createTable('lists')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('member_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('lists_workspace_created').on('lists').columns(['workspace_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('workspace_list_counts')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('list_count', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('list_members')
    .addColumn('list_id', 'text', (c) => c.notNull().references('lists.id'))
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('added_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('list_members_pk', ['list_id', 'entity_id'])
    .execute();
  // Serves newest-first pages read from either end (offsets past the middle read backwards).
  await db.schema.createIndex('list_members_order').on('list_members').columns(['list_id', 'added_at', 'entity_id']).execute();
}
