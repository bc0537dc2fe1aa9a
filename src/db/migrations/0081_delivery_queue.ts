import { type Kysely, sql } from 'kysely';
import { runBeside } from '../run-beside.ts';

// A webhook claim shares its rows among the endpoints with due deliveries (docs/events.md
// §Delivery): it finds those endpoints by a skip scan of this index and walks each one's rows in
// event order through it, so that an endpoint's backlog, however long, fills no claim. The rows
// of a failing endpoint, parked, stay out of it. It replaces the index of every endpoint's rows in
// one event order (`webhook_deliveries_walk`), which no claim reads any more.
//
// An older release beside it (docs/deploy.md §Migrations) keeps delivering every event, in order
// per object: what it writes is unchanged, and its claim, without the index it walked, reads and
// sorts the due rows instead.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_deliveries_queue on webhook_deliveries (subscription_id, event_seq) where parked = 0`.execute(db);
  await db.schema.dropIndex('webhook_deliveries_walk').execute();
  await runBeside(db, '0081_delivery_queue');
}
