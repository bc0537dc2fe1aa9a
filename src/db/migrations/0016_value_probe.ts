import { type Kysely, sql } from 'kysely';

// The probe index of filters (docs/filtering.md §Indexes): a filter checked by record id (a walk
// of the listing, a second filter, a `contains` candidate) reads `(record_id, field)` of the value
// index. With the values in the key too, the probe is answered from the index alone instead of
// the index and then the table's row. Same name, same leading columns: deletes by record id and
// every other reader of the old index read this one.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index record_values_record`.execute(db);
  await db.schema.createIndex('record_values_record').on('record_values').columns(['record_id', 'field', 'value_text', 'value_num']).execute();
}
