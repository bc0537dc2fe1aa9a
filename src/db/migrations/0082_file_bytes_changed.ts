import type { Kysely } from 'kysely';
import { runBeside } from '../run-beside.ts';

// When a COMPLETED file's bytes were last replaced (docs/files.md §Addresses): a re-import that
// brings other bytes sets it, and a download's Last-Modified reads it, so that a client holding
// the earlier bytes sees that they changed. Null: the bytes are those the file completed with, and
// Last-Modified is its completedAt. A file re-imported before it keeps null: when its bytes
// changed was never stored.
//
// An older release beside it (docs/deploy.md §Migrations) writes what it wrote: a re-import it
// runs leaves the column as it is, and so Last-Modified, as it did in that release; the ETag (the
// bytes' MD5) moves either way.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('files').addColumn('bytes_changed_at', 'text').execute();
  await runBeside(db, '0082_file_bytes_changed');
}
