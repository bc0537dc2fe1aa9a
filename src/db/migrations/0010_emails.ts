import { type Kysely, sql } from 'kysely';

// Mailboxes, e-mails (metadata apart from bodies), their attachments, drafts, and the outbox that
// delivers sent mail after commit (docs/emails.md).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mailboxes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    // Lower-cased: `from` is compared ignoring case.
    .addColumn('address', 'text', (c) => c.notNull())
    // What other users and workspace keys see of its mail: FULL or METADATA.
    .addColumn('others_see', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    // A removed mailbox sends nothing more; its mail keeps its owner and visibility.
    .addColumn('removed_at', 'text')
    .addUniqueConstraint('mailboxes_workspace_external', ['workspace_id', 'external_id'])
    .execute();
  // One live mailbox per address in a workspace; a removed one frees its address.
  await db.schema
    .createIndex('mailboxes_address')
    .on('mailboxes')
    .columns(['workspace_id', 'address'])
    .unique()
    .where(sql.ref('removed_at'), 'is', null)
    .execute();
  await db.schema.createIndex('mailboxes_user').on('mailboxes').columns(['user_id', 'address']).execute();

  await db.schema
    .createTable('emails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id'))
    .addColumn('external_id', 'text')
    .addColumn('from_address', 'text', (c) => c.notNull())
    // JSON arrays of addresses.
    .addColumn('to_json', 'text', (c) => c.notNull())
    .addColumn('cc_json', 'text', (c) => c.notNull())
    .addColumn('bcc_json', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('sent_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    // The delivery of a sent e-mail (null for imported mail): queued, sent, logged or failed.
    .addColumn('delivery_status', 'text')
    .addColumn('delivery_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delivered_at', 'text')
    .addColumn('delivery_error', 'text')
    .addUniqueConstraint('emails_workspace_external', ['workspace_id', 'external_id'])
    .execute();
  // Serves GET /v1/emails (newest $sentAt first, ties by id) and its ranked index.
  await db.schema.createIndex('emails_workspace_sent').on('emails').columns(['workspace_id', 'sent_at', 'id']).execute();

  // Bodies apart, so that a METADATA read never touches one: the HTML kept as `$body`, and the
  // plain text of a TEXT send, which is what is delivered.
  await db.schema
    .createTable('email_bodies')
    .addColumn('email_id', 'text', (c) => c.primaryKey().references('emails.id'))
    .addColumn('html', 'text', (c) => c.notNull())
    .addColumn('text', 'text')
    .execute();

  await db.schema
    .createTable('email_files')
    .addColumn('email_id', 'text', (c) => c.notNull().references('emails.id'))
    .addColumn('file_id', 'text', (c) => c.notNull().references('files.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('email_files_pk', ['email_id', 'position'])
    .execute();

  await db.schema
    .createTable('email_drafts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id'))
    .addColumn('to_json', 'text', (c) => c.notNull())
    .addColumn('cc_json', 'text', (c) => c.notNull())
    .addColumn('bcc_json', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('body_html', 'text')
    .addColumn('body_text', 'text')
    .addColumn('attachments_json', 'text', (c) => c.notNull())
    .addColumn('drafted_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_drafts_mailbox').on('email_drafts').columns(['mailbox_id', 'drafted_at']).execute();

  // Mail still to deliver, one row per sent e-mail, removed once its outcome is known. A row is
  // due when next_attempt_at has passed; a claim moves next_attempt_at to the end of its lease,
  // so the row of a dispatcher that died becomes due again by itself.
  await db.schema
    .createTable('email_outbox')
    .addColumn('email_id', 'text', (c) => c.primaryKey().references('emails.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_outbox_due').on('email_outbox').columns(['next_attempt_at', 'email_id']).execute();
}
