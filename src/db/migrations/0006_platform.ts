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

// A user's name becomes first and last name, the one source of a member's $name: split at the
// first run of spaces, the first word the first name, the rest the last name (docs/design.md
// §Members). Written out here, not imported, so that the migration never changes.
function splitName(name: string | null): { first_name: string | null; last_name: string | null } {
  const m = /^(\S+)\s*([\s\S]*)$/.exec((name ?? '').trim());
  if (!m) return { first_name: null, last_name: null };
  return { first_name: m[1] as string, last_name: (m[2] as string).trim() || null };
}

async function membersOfWorkspaces(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('first_name', 'text').execute();
  await db.schema.alterTable('users').addColumn('last_name', 'text').execute();
  await db.schema.alterTable('users').addColumn('profile_image_url', 'text').execute();
  const named = (await db.selectFrom('users').select(['id', 'name']).where('name', 'is not', null).execute()) as Array<{ id: string; name: string }>;
  for (const u of named) await db.updateTable('users').set(splitName(u.name)).where('id', '=', u.id).execute();
  await db.schema.alterTable('users').dropColumn('name').execute();
  // Serves GET /v1/members: newest first, ties by id.
  await db.schema.createIndex('users_workspace_created').on('users').columns(['workspace_id', 'created_at', 'id']).execute();

  // Users per workspace, so that the members' totalCount is one row read.
  await db.schema
    .createTable('workspace_user_counts')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('user_count', 'integer', (c) => c.notNull())
    .execute();
  await sql`
    insert into workspace_user_counts (workspace_id, user_count)
    select workspace_id, count(*) from users group by workspace_id
  `.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await idempotencyPerOperation(db);
  await membersOfWorkspaces(db);
}
