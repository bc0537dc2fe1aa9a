import { type Kysely, sql } from 'kysely';

// Creates of a ranked set no longer queue on one another on PostgreSQL (docs/pages.md §Creates
// that only insert): each records the rows it adds as count deltas of the entries holding them,
// which readers add to the entries' counts and a writer holding the scope alone folds in. The
// table exists on SQLite too (one schema), where a scope has one writer and nothing writes to it.
//
// `workspace_list_counts` counted a workspace's lists and was never read (totalCount comes from
// the ranked index); every create of a workspace updated its one row, which serialized them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rank_deltas')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('lo_ts', 'text', (c) => c.notNull())
    .addColumn('lo_id', 'text', (c) => c.notNull())
    .addColumn('d', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rank_deltas_entry').on('rank_deltas').columns(['scope', 'level', 'lo_ts', 'lo_id']).execute();
  await sql`drop table workspace_list_counts`.execute(db);
}
