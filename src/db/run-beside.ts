// Which migrations a release that does not know them may run beside (docs/deploy.md §Migrations).
// A migration that adds only what the release before it neither reads nor has to write (an index,
// a table that release never touches, a column with a default) says so in its up(), in the same
// transaction as its change; every other one, and any migration of a release before 0077, makes
// that release refuse the database: its writes would leave the newer schema wrong.
import { type Kysely, sql } from 'kysely';

export const RUN_BESIDE_TABLE = 'migrations_run_beside';

/** Called by a migration's up(): releases that do not know `name` keep running beside it. */
export async function runBeside(db: Kysely<any>, name: string): Promise<void> {
  await db.insertInto(RUN_BESIDE_TABLE).values({ name }).execute();
}

/** The names in `table` (qualified by its schema where it has one). */
export async function namesIn(db: Kysely<any>, table: string): Promise<Set<string>> {
  const rows = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(db);
  return new Set(rows.rows.map((r) => r.name));
}
