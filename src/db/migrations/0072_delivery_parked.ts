import { type Kysely, sql } from 'kysely';

// A failing webhook endpoint's deliveries are parked (docs/events.md §Delivery): its probe takes
// them one at a time, and the claim's walk in event order, through an index of the rows that are
// not parked, never steps over them. Without it every claim stepped over the whole due backlog of
// every failing endpoint, which grows for as long as the endpoint is down. The rows parked are
// found by endpoint, oldest event first, when it answers again.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhook_deliveries')
    .addColumn('parked', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update webhook_deliveries set parked = 1
    where subscription_id in (select id from webhook_subscriptions where failing_since is not null)`.execute(db);
  await db.schema.dropIndex('webhook_deliveries_seq').execute();
  await sql`create index webhook_deliveries_walk on webhook_deliveries (event_seq) where parked = 0`.execute(db);
  await sql`create index webhook_deliveries_parked on webhook_deliveries (subscription_id, event_seq) where parked = 1`.execute(db);
}
