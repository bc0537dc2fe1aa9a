import type { Kysely } from 'kysely';
import { runBeside } from '../run-beside.ts';

// The entries merged into a record are found from its id (docs/trash.md §Purge): a purge of a
// merged entry points those merged into it at the end of its chain, through this index, never by a
// read of the workspace's whole trash.
//
// An older release beside it (docs/deploy.md §Migrations) neither reads nor writes anything new:
// a purge it runs of a merged entry leaves the entries merged into it as they are, as it did.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('trash_merged').on('trash').columns(['workspace_id', 'merged_into']).execute();
  await runBeside(db, '0084_trash_merged');
}
