import type { Kysely } from 'kysely';

// A list imported by `rolodex import` keeps the externalId it was given, unique in its workspace,
// so that a re-import updates it instead of adding a second list (docs/import.md §`list`). Lists
// created through the API have none.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('lists').addColumn('external_id', 'text').execute();
  await db.schema.createIndex('lists_workspace_external').on('lists').columns(['workspace_id', 'external_id']).unique().execute();
}
