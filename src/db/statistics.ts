// Table statistics for the query planners (docs/design.md §Database statistics). PostgreSQL keeps
// its own through autovacuum, within about a minute of a large change. SQLite keeps none until
// asked: without them its planner guesses, and a guess once made a message page walk a
// workspace's whole index (docs/performance.md §Plans that must not depend on statistics).
// Statements on hot paths are written so that no plan can do that; fresh statistics are the second
// line.
import { sql } from 'kysely';
import type { Db } from './types.ts';

/**
 * Brings statistics up to date where they are missing or stale: SQLite's PRAGMA optimize, which
 * analyzes only tables never analyzed or grown or shrunk many times since, each from a bounded
 * sample (analysis_limit) so that a large table costs milliseconds; on PostgreSQL, after a bulk
 * write (`bulk`), ANALYZE of the schema's tables, so that the first requests after an import do
 * not wait for autovacuum.
 */
export async function refreshStatistics(db: Db, opts: { bulk?: boolean } = {}): Promise<void> {
  if (db.dialect === 'postgres') {
    if (!opts.bulk) return;
    // Only this schema's tables: a bare ANALYZE would sample every schema of the database.
    const r = await sql<{ name: string }>`select quote_ident(tablename) as name from pg_tables where schemaname = current_schema()`.execute(db.kysely);
    if (r.rows.length > 0) await sql.raw(`analyze ${r.rows.map((t) => t.name).join(', ')}`).execute(db.kysely);
    return;
  }
  await sql`pragma analysis_limit = 1000`.execute(db.kysely);
  // 0x10002: consider every table, not only those this connection has used.
  await sql`pragma optimize = 0x10002`.execute(db.kysely);
}
