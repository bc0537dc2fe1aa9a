import { type Kysely, sql } from 'kysely';

// Enrichment runs (docs/enrichment.md): one row per run, claimed by the runners with a lease.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('enrichment_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'text', (c) => c.notNull())
    // queued, running, completed, failed, timed_out.
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    // JSON arrays of field keys: what the run fills, and which of them it may overwrite.
    .addColumn('target_fields', 'text', (c) => c.notNull())
    .addColumn('named_fields', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    // A queued run is due at due_at; a running one's lease ends then (the database's clock).
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .execute();
  // One run in flight per record: a second request finds it instead (already_running).
  await db.schema
    .createIndex('enrichment_runs_active')
    .on('enrichment_runs')
    .columns(['workspace_id', 'entity_id'])
    .unique()
    .where(sql.ref('status'), 'in', sql`('queued', 'running')`)
    .execute();
  // The runners' claims: runs in flight by when they are due.
  await db.schema
    .createIndex('enrichment_runs_due')
    .on('enrichment_runs')
    .columns(['due_at'])
    .where(sql.ref('status'), 'in', sql`('queued', 'running')`)
    .execute();
}
