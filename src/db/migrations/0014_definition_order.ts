import { type Kysely, sql } from 'kysely';

// Custom field and relationship definitions are listed in the order they were created
// (docs/records.md §Definitions). Two created in the same millisecond share `created_at`, and
// their ids' random part would then decide, so each gets a position in its type, counted from 0.
// Existing rows are numbered by (created_at, id), the order they were shown in before.
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['field_definitions', 'relationship_definitions']) {
    await db.schema
      .alterTable(table)
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`
      update ${sql.table(table)} set position = (
        select count(*) from ${sql.table(table)} as earlier
        where earlier.workspace_id = ${sql.table(table)}.workspace_id
          and earlier.object_type = ${sql.table(table)}.object_type
          and (earlier.created_at < ${sql.table(table)}.created_at
            or (earlier.created_at = ${sql.table(table)}.created_at and earlier.id < ${sql.table(table)}.id))
      )`.execute(db);
    await db.schema.createIndex(`${table}_position_idx`).on(table).columns(['workspace_id', 'object_type', 'position']).execute();
  }
}
