import type { Kysely } from 'kysely';

// Custom object types (docs/activities.md §Custom objects): a slug and a label per workspace.
// Their records are rows of `records` whose kind is the slug, so nothing else changes.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('object_types')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('object_types_pk', ['workspace_id', 'slug'])
    .execute();
}
