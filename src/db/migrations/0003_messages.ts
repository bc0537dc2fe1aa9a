import type { Kysely } from 'kysely';

// Channels, their members, messages (metadata apart from text) and message → file links.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('external_id', 'text')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('message_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('channels_workspace_external', ['workspace_id', 'external_id'])
    .execute();
  // The visible-channel set of a caller: every channel of the workspace with its visibility.
  await db.schema.createIndex('channels_workspace_visibility').on('channels').columns(['workspace_id', 'visibility', 'id', 'message_count']).execute();

  await db.schema
    .createTable('channel_members')
    .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('channel_members_pk', ['channel_id', 'user_id'])
    .execute();
  await db.schema.createIndex('channel_members_user').on('channel_members').columns(['user_id', 'channel_id']).execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id'))
    // The channel's visibility, copied (and updated with it, in the same transaction) so that the
    // newest-first walk can keep or skip an index entry without a lookup per row.
    .addColumn('channel_visibility', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('sent_at', 'text', (c) => c.notNull())
    .addColumn('edited_at', 'text')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_thread_id', 'text')
    .addColumn('text_type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('messages_workspace_external', ['workspace_id', 'external_id'])
    .execute();
  // Newest-first walk of a workspace, filtered by visibility and membership without leaving the
  // index: serves pages when the caller sees much of the workspace.
  await db.schema
    .createIndex('messages_workspace_sent')
    .on('messages')
    .columns(['workspace_id', 'sent_at', 'id', 'channel_visibility', 'channel_id'])
    .execute();
  // Newest-first per channel: serves pages when the caller sees few channels, and recounts.
  await db.schema.createIndex('messages_channel_sent').on('messages').columns(['channel_id', 'sent_at', 'id']).execute();

  await db.schema
    .createTable('message_texts')
    .addColumn('message_id', 'text', (c) => c.primaryKey().references('messages.id'))
    .addColumn('text', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('message_files')
    .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id'))
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('message_files_pk', ['message_id', 'position'])
    .execute();
}
