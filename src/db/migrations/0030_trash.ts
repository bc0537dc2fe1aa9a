import type { Kysely } from 'kysely';

// The trash (docs/trash.md): a deleted record leaves its tables, so that every read, filter, count
// and uniqueness check stops seeing it without a condition of its own, and waits here to be
// restored or purged. `trash` holds the record's rows as they were (JSON) and the body a repeated
// delete answers; `trash_links` and `trash_members` hold the relationship rows and list
// memberships that touched it, each under the trash entry that will bring it back.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('trash')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text', (c) => c.notNull())
    .addColumn('merged_into', 'text')
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('trash_workspace').on('trash').columns(['workspace_id', 'deleted_at', 'id']).execute();
  await db.schema.createIndex('trash_deleted').on('trash').columns(['deleted_at', 'id']).execute();

  await db.schema
    .createTable('trash_links')
    .addColumn('trash_id', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('trash_links_trash').on('trash_links').columns(['trash_id']).execute();
  await db.schema.createIndex('trash_links_source').on('trash_links').columns(['source_id']).execute();
  await db.schema.createIndex('trash_links_target').on('trash_links').columns(['target_id']).execute();

  await db.schema
    .createTable('trash_members')
    .addColumn('trash_id', 'text', (c) => c.notNull())
    .addColumn('list_id', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('added_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('trash_members_trash').on('trash_members').columns(['trash_id']).execute();
  await db.schema.createIndex('trash_members_list').on('trash_members').columns(['list_id']).execute();
  await db.schema.createIndex('trash_members_entity').on('trash_members').columns(['entity_id']).execute();

  // A record's memberships, found when it is trashed, restored or merged.
  await db.schema.createIndex('list_members_entity').on('list_members').columns(['entity_id']).execute();
}
