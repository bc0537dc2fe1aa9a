import type { Kysely } from 'kysely';
import { RUN_BESIDE_TABLE, runBeside } from '../run-beside.ts';

// The migrations beside which a release that does not know them keeps running (docs/deploy.md
// §Migrations): each one that leaves the release before it correct writes its name here in its
// own up(). One that is not listed, a table that older releases' writes do not fill (0076's
// trash_transcripts), makes those releases refuse the database instead of running on it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable(RUN_BESIDE_TABLE)
    .addColumn('name', 'text', (c) => c.primaryKey())
    .execute();
  await runBeside(db, '0077_run_beside');
}
