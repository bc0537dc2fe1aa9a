import type { Kysely } from 'kysely';

// A message's files are parents of their bytes too (docs/files.md §Who downloads the bytes): the
// messages that hold a file are found from its id through this index, never by a scan of every
// message's files (whose key starts with the message).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('message_files_file').on('message_files').column('file_id').execute();
}
