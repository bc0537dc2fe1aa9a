import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.ts';

// PostgreSQL estimates the rows pointing at one record (`target_id =` a value it does not know
// when planning: a correlated subquery, a generic plan) as the table's rows divided by the distinct
// targets it sampled. Where relationships point at few records (a thousand contacts of one account,
// every task assigned to one member) that is most of the table, and a plan built on it scans
// `entity_relationships` once per record a read returns. The distinct count is declared instead: a target
// is held by about ten rows, so such a read goes through the inverse index whatever the sample
// (docs/design.md §Database statistics). SQLite's planner takes that index by the statement's shape.
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`alter table entity_relationships alter column target_id set (n_distinct = -0.1)`.execute(db);
  // The setting is read by ANALYZE: the estimates change now, not at autovacuum's next pass.
  await sql`analyze entity_relationships`.execute(db);
}
