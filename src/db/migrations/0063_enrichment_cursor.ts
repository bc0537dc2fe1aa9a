import type { Kysely } from 'kysely';

// The cursor of ENRICHMENT=on-create over the change log (docs/enrichment.md §Runs): the `seq` of
// the last event whose creation run is recorded (or that needed none). One row, present only while
// the servers run with on-create; a move is a compare-and-set on `seq`.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('enrichment_cursor')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
