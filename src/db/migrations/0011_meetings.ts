import type { Kysely } from 'kysely';
import { defineRank, rankRebuildAll } from '../rank/index.ts';

// The host of a URL, lower case, as the value index keeps it (docs/records.md §Value index),
// spelled out here as it was when this migration was written.
function host(v: string): string | null {
  for (const candidate of [v, `https://${v}`]) {
    try {
      const u = new URL(candidate);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '') return u.hostname.normalize('NFKC').toLowerCase();
    } catch {
      // not a URL this way; try the next
    }
  }
  return null;
}

// Accounts written before this migration get the `$website.host` rows that meetings link new
// contacts by; their `$website` rows hold each URL folded, which keeps its host.
async function websiteHosts(db: Kysely<any>): Promise<void> {
  let after = '';
  for (;;) {
    const rows: { workspace_id: string; value_text: string | null; record_id: string }[] = await db
      .selectFrom('record_values')
      .select(['workspace_id', 'value_text', 'record_id'])
      .where('object_type', '=', 'account')
      .where('field', '=', '$website')
      .where('record_id', '>', after)
      .orderBy('record_id')
      .limit(1000)
      .execute();
    if (rows.length === 0) return;
    // A batch ends on a whole record, so no record's hosts are split over two batches.
    const last = rows.at(-1)!.record_id;
    const whole = rows.length === 1000 ? rows.filter((r) => r.record_id !== last) : rows;
    const batch = whole.length > 0 ? whole : rows;
    const hosts = batch.flatMap((r) => {
      const h = r.value_text === null ? null : host(r.value_text);
      return h === null
        ? []
        : [{ workspace_id: r.workspace_id, object_type: 'account', field: '$website.host', value_text: h, value_num: null, record_id: r.record_id }];
    });
    if (hosts.length > 0) await db.insertInto('record_values').values(hosts).execute();
    after = batch.at(-1)!.record_id;
  }
}

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

  await websiteHosts(db);
  await rankRebuildAll(db, defineRank({ name: 'meetings', table: 'meetings', by: ['workspace_id'], ts: 'start_date', id: 'id' }));
}
