import type { Kysely } from 'kysely';

// The webhook dispatchers claim due deliveries in event order (docs/events.md §Delivery). With this
// index a claim walks the outbox from its oldest event and stops once it has its rows, whatever
// the backlog behind them; without it, every claim read and sorted every due delivery.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_seq').on('webhook_deliveries').columns(['event_seq']).execute();
}
