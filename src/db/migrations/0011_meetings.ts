import type { Kysely } from 'kysely';
import { defineRank, rankRebuildAll } from '../rank.ts';

// Meetings (docs/meetings.md): the row, its private contents apart (read only at FULL access),
// the folded addresses of its organizer and attendees (access and derived relationships), the
// ranked listing; and the purpose a file was created with, which decides what may be a transcript.
export async function up(db: Kysely<any>): Promise<void> {
  // Files created before this migration have no recorded purpose (null).
  await db.schema.alterTable('files').addColumn('purpose', 'text').execute();

  await db.schema
    .createTable('meetings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('external_id', 'text')
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('start_date', 'text', (c) => c.notNull())
    .addColumn('end_date', 'text', (c) => c.notNull())
    .addColumn('meeting_url', 'text')
    .addColumn('organizer_email', 'text')
    // JSON array of addresses as written, or null when never given.
    .addColumn('attendee_emails', 'text')
    .addColumn('privacy_setting', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Newest `$startDate` first per workspace, read at any offset (docs/pages.md).
  await db.schema.createIndex('meetings_listing').on('meetings').columns(['workspace_id', 'start_date', 'id']).execute();

  await db.schema
    .createTable('meeting_contents')
    .addColumn('meeting_id', 'text', (c) => c.primaryKey().references('meetings.id'))
    .addColumn('description', 'text')
    .addColumn('transcript_id', 'text')
    .execute();

  await db.schema
    .createTable('meeting_participants')
    .addColumn('meeting_id', 'text', (c) => c.notNull().references('meetings.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('meeting_participants_pk', ['meeting_id', 'email'])
    .execute();
  // A contact's meetings (the derived `$meeting` of records).
  await db.schema.createIndex('meeting_participants_email').on('meeting_participants').columns(['workspace_id', 'email', 'meeting_id']).execute();

  await rankRebuildAll(db, defineRank({ name: 'meetings', table: 'meetings', by: ['workspace_id'], ts: 'start_date', id: 'id' }));
}
