import type { Kysely } from 'kysely';

// Files, the Knowledge they join, and blobs waiting to be deleted (docs/design.md §Files).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('external_id', 'text')
    // api (listable), app, chat_attachment
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('md5', 'text')
    .addColumn('blob_key', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addColumn('expires_at', 'text')
    // The session's deadline, kept after expires_at is cleared: presigned S3 PUTs live that long.
    .addColumn('upload_deadline', 'text', (c) => c.notNull())
    .addUniqueConstraint('files_workspace_external', ['workspace_id', 'external_id'])
    .execute();
  // Serves GET /v1/files (listable files newest first) and its count.
  await db.schema.createIndex('files_listing').on('files').columns(['workspace_id', 'source', 'created_at', 'id']).execute();
  // Serves the sweeper: PENDING sessions by deadline.
  await db.schema.createIndex('files_pending').on('files').columns(['status', 'expires_at']).execute();

  // Listable files per workspace, so totalCount never scans.
  await db.schema
    .createTable('file_counts')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
    .addColumn('listable', 'bigint', (c) => c.notNull())
    .execute();

  // A knowledge purpose is not persisted on the file; a pending entry remembers where the file
  // goes, and completion activates it.
  await db.schema
    .createTable('knowledge_entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('file_id', 'text', (c) => c.notNull().unique().references('files.id'))
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('added_at', 'text')
    .execute();
  await db.schema.createIndex('knowledge_owner').on('knowledge_entries').columns(['workspace_id', 'owner_type', 'user_id', 'state']).execute();

  // Blobs no row points to any more. Written in the transaction that orphans them, deleted by
  // the sweeper once not_before has passed (late presigned PUTs land until the session deadline).
  await db.schema
    .createTable('blob_garbage')
    .addColumn('blob_key', 'text', (c) => c.primaryKey())
    .addColumn('not_before', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('blob_garbage_due').on('blob_garbage').column('not_before').execute();
}
