import type { Kysely } from 'kysely';

// The workspace's default country for telephone numbers (docs/records.md §Telephone numbers): a
// number written without `+` and a country code is read in it when its field has none. Null, the
// value of every workspace until an operator sets it, means none.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('default_country', 'text').execute();
}
