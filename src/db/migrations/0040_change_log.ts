import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.ts';

// The change log (docs/events.md): events, field history, webhook subscriptions and the webhook
// outbox. Records that exist before it get their one starting history entry: a snapshot of their
// fields under the key `*`, `isCreate` false, recorded at their updatedAt (docs/history.md).
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  // `seq` orders the events of one record as their transactions committed: a record's writes
  // hold its row, so a later write's event is inserted after the earlier one's commit.
  await db.schema
    .createTable('events')
    .addColumn('seq', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    // The event as delivered, JSON.
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_workspace_seq').on('events').columns(['workspace_id', 'seq']).execute();
  await db.schema.createIndex('events_occurred').on('events').columns(['occurred_at']).execute();

  // One row per change of one field; `seq` counts the field's changes (0: the starting snapshot
  // `*` of the whole record). The primary key serves a page newest first at any depth.
  await db.schema
    .createTable('field_history')
    .addColumn('record_id', 'text', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    // JSON of the stored value (null: cleared); for `*`, the JSON object of every field.
    .addColumn('value', 'text')
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .addColumn('is_create', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('field_history_pk', ['record_id', 'field', 'seq'])
    .execute();
  await sql`insert into field_history (record_id, field, seq, workspace_id, value, recorded_at, is_create)
    select id, '*', 0, workspace_id, fields, updated_at, 0 from records`.execute(db);

  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('all_events', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // Set on the first failure of a run of failures, cleared by a success.
    .addColumn('failing_since', 'text')
    .addColumn('last_error', 'text')
    .addColumn('disabled_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_subscriptions_workspace').on('webhook_subscriptions').columns(['workspace_id']).execute();
  await db.schema
    .createTable('webhook_subscription_events')
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('webhook_subscriptions.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_subscription_events_pk', ['subscription_id', 'type'])
    .execute();

  // The outbox of webhooks: one row per event and subscription until it is delivered.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_seq', 'bigint', (c) => c.notNull())
    .addColumn('object_id', 'text', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    // Its first failure: a delivery still failing WEBHOOK_DISABLE_AFTER_MS later is given up.
    .addColumn('first_failed_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_order').on('webhook_deliveries').columns(['subscription_id', 'object_id', 'event_seq']).execute();
}
