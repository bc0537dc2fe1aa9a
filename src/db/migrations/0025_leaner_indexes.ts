import { type Kysely, sql } from 'kysely';

// Two indexes that cost every write and read nothing of their own (docs/filtering.md §Indexes):
// - The text parts of the value index (record_values_text, and record_values_prefix on
//   PostgreSQL) hold only rows that have a text. Numeric rows (a fifth of an imported contact's)
//   left a null value_text in them, which no filter reads: every text condition compares
//   value_text with `=`, `in`, a range or a join, or says `value_text is not null` itself (LIKE,
//   which SQLite's planner does not see through), so both planners may use the partial index.
// - entity_relationships_target (target_id) is the first column of entity_relationships_inverse
//   (target_id, name, source_id), which serves every read by target.
// At 1,000,000 imported contacts they were 1.25 million and 1 million entries
// (docs/performance.md §Bulk import).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('entity_relationships_target').execute();
  await db.schema.dropIndex('record_values_text').execute();
  await db.schema
    .createIndex('record_values_text')
    .on('record_values')
    .columns(['workspace_id', 'object_type', 'field', 'value_text', 'record_id'])
    .where('value_text', 'is not', null)
    .execute();
  if (sql`${0}`.compile(db).sql === '$1') {
    await sql`drop index record_values_prefix`.execute(db);
    await sql`create index record_values_prefix on record_values (workspace_id, object_type, field, value_text collate "C", record_id)
      where value_text is not null`.execute(db);
  }
}
