import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.ts';

// A record's externalId (given by `rolodex import`, absent on records the API creates) is unique
// per workspace and type through an index that holds only the records that have one. Over every
// record, that index began with the same two columns as the type's listing (workspace, type,
// createdAt, id), and where PostgreSQL's statistics make a workspace's type look small (a table
// analyzed before an import, a generic plan) the planner took either for a listing's page: through
// the externalIds' one it read every record of the type, an import's uncommitted ones included,
// and sorted them (docs/design.md §Database statistics). A read that does not name an externalId
// cannot use an index on the rows that have one. SQLite's planner takes the listing's index by the
// statement's shape; its unique constraint stays as it is, and the upserts' conflict target
// (`… where external_id is not null`) matches both.
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`alter table records drop constraint records_workspace_kind_external`.execute(db);
  await sql`create unique index records_workspace_kind_external on records (workspace_id, kind, external_id) where external_id is not null`.execute(db);
}
