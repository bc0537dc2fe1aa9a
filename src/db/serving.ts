// The settings of a handle that serves requests, set once its migrations have run
// (docs/performance.md §Temporary tables of a serving SQLite connection).
import { sql } from 'kysely';
import type { Db } from './types.ts';

/**
 * SQLite: the writing connection keeps its temporary tables and sorts in memory. A request's
 * statements materialize small ones (a ranked listing's count, a multi-row insert's values, a
 * grouping); kept as pages of a temporary file's cache, each is allocated and freed per statement,
 * and the C allocator gives the top of the heap back to the system and faults it in again every
 * time: the statement pays for that memory each time, far more than for its own work. A request's statements
 * are bounded by its body, so their temporary tables stay small; a migration's index builds and an
 * import's, which sort whole tables, run on connections that spill to a file as before.
 * PostgreSQL: nothing.
 */
export async function forServing(db: Db): Promise<void> {
  if (db.dialect !== 'sqlite') return;
  await sql`pragma temp_store = memory`.execute(db.kysely);
}
