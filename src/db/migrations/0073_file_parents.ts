import type { Kysely } from 'kysely';

// A file's download is decided by the meetings it is the transcript of and the e-mails it is
// attached to (docs/files.md §Who downloads the bytes): each is found from the file's id through
// an index of its own, never by a scan of every meeting's contents or every attachment.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('meeting_contents_transcript').on('meeting_contents').column('transcript_id').execute();
  await db.schema.createIndex('email_files_file').on('email_files').column('file_id').execute();
}
