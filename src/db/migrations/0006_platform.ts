import { type Kysely, sql } from 'kysely';

// The operations that honoured Idempotency-Key when keys were kept per workspace only.
const OPERATIONS_BEFORE = ['createList', 'updateList', 'createFile', 'completeFile', 'cancelFile'];

// Idempotency keys are kept per workspace and operation, and only successes are stored
// (docs/design.md §Idempotency): the key of the table gains the operation.
async function idempotencyPerOperation(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys_next')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('body', 'text')
    .addColumn('locked_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_operation_pk', ['workspace_id', 'operation', 'key'])
    .execute();
  // A stored success does not say which operation it answered, and its fingerprint (method, path,
  // body) matches only that operation's requests. So it is kept under every operation of the time:
  // its own replays it, any other finds another fingerprint (422), exactly as before, until it
  // expires. Stored errors are dropped (they are no longer replayed), and so are pending claims:
  // their holders are gone and committed nothing.
  const operations = sql.join(
    OPERATIONS_BEFORE.map((op) => sql`select cast(${op} as text) as operation`),
    sql` union all `,
  );
  await sql`
    insert into idempotency_keys_next (workspace_id, operation, key, fingerprint, state, status_code, body, locked_at, created_at)
    select k.workspace_id, o.operation, k.key, k.fingerprint, k.state, k.status_code, k.body, k.locked_at, k.created_at
    from idempotency_keys k cross join (${operations}) o
    where k.state = 'done' and k.status_code >= 200 and k.status_code < 300
  `.execute(db);
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.alterTable('idempotency_keys_next').renameTo('idempotency_keys').execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await idempotencyPerOperation(db);
}
