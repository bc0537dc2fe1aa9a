import type { Kysely } from 'kysely';

// A meeting imported by `rolodex import` keeps the externalId it was given, unique in its
// workspace, so that a re-import updates it instead of adding a second meeting (docs/import.md
// §`meeting`). The column is there since 0011; meetings created through the API have none.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('meetings_workspace_external').on('meetings').columns(['workspace_id', 'external_id']).unique().execute();
}
