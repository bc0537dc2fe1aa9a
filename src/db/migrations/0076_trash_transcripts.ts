import type { Kysely } from 'kysely';

// A meeting in the trash keeps its transcript's bytes to who read it at FULL (docs/files.md §Who
// downloads the bytes): the transcript link with the meeting's privacy, and its participants,
// held under the trash entry and found from the file's id through an index of their own. Meetings
// already in the trash get theirs from their entries' payloads.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('trash_transcripts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('privacy_setting', 'text')
    .execute();
  await db.schema.createIndex('trash_transcripts_file').on('trash_transcripts').column('file_id').execute();
  await db.schema
    .createTable('trash_participants')
    .addColumn('meeting_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('trash_participants_pk', ['meeting_id', 'email'])
    .execute();
  let after = '';
  for (;;) {
    const entries = await db
      .selectFrom('trash')
      .select(['id', 'workspace_id', 'payload'])
      .where('object_type', '=', 'meeting')
      .where('id', '>', after)
      .orderBy('id')
      .limit(500)
      .execute();
    if (entries.length === 0) return;
    for (const entry of entries as { id: string; workspace_id: string; payload: string }[]) {
      const meeting = (JSON.parse(entry.payload) as { meeting?: Held }).meeting;
      const fileId = meeting?.contents?.transcript_id;
      if (!meeting || !fileId) continue;
      await db
        .insertInto('trash_transcripts')
        .values({ id: entry.id, workspace_id: entry.workspace_id, file_id: fileId, privacy_setting: meeting.row.privacy_setting ?? null })
        .execute();
      const emails = [...new Set(meeting.participants)];
      if (emails.length > 0)
        await db
          .insertInto('trash_participants')
          .values(emails.map((email) => ({ meeting_id: entry.id, email })))
          .execute();
    }
    after = entries[entries.length - 1]!.id as string;
  }
}

/** What a meeting's trash entry holds (TrashPayload.meeting in src/trash/service.ts), as far as read here. */
interface Held {
  row: { privacy_setting?: string | null };
  contents?: { transcript_id?: string | null };
  participants: string[];
}
