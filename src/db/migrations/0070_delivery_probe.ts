import type { Kysely } from 'kysely';

// A claim tries one due delivery of each failing webhook endpoint (docs/events.md §Delivery). With
// this index its probe reads that endpoint's due rows, oldest retry first, and no more: rows whose
// retry is backed off are not read, however long the endpoint's backlog. Without it the probe
// walked the endpoint's rows by object and stepped over every backed-off one, once per claim.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_probe').on('webhook_deliveries').columns(['subscription_id', 'next_attempt_at']).execute();
}
