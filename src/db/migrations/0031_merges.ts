import type { Kysely } from 'kysely';

// Merges (docs/merge.md): one row per merge, read back by `GET /v1/merges/{id}`.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('merges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('primary_id', 'text', (c) => c.notNull())
    .addColumn('duplicate_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
