// Table statistics for the query planners (docs/design.md §Database statistics). PostgreSQL keeps
// its own through autovacuum, within about a minute of a large change. SQLite keeps none until
// asked: without them its planner guesses, and a guess once made a message page walk a
// workspace's whole index (docs/performance.md §Plans that must not depend on statistics).
// Statements on hot paths are written so that no plan can do that; fresh statistics are the second
// line.
import { sql } from 'kysely';
import type { Db } from './types.ts';

/** How long the write lock is left free after each index: a waiting writer tries every 4 ms at most (`beginImmediate`). */
const PAUSE_MS = 5;

/**
 * Brings statistics up to date where they are missing or stale: on SQLite the tables PRAGMA
 * optimize picks (never analyzed, or grown or shrunk many times since), each from a bounded sample
 * (analysis_limit); on PostgreSQL, after a bulk write (`bulk`), ANALYZE of the schema's tables, so
 * that the first requests after an import do not wait for autovacuum.
 *
 * An ANALYZE holds SQLite's write lock while it runs, and the sample bounds the rows it reads, not
 * its count of an index's entries; PRAGMA optimize, one statement, would hold the lock for as long
 * as every count takes (seconds after a large import), and a server sharing the file would wait
 * that long to write. So the tables it picks are analyzed one index per statement, which writes
 * the same statistics, and the lock is left free for PAUSE_MS after each: a writer of another
 * process waits for one index's count at most (docs/design.md §Database statistics).
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
  // 0x10000: every table, not only those this connection has used; 0x2: those that need it;
  // 0x1: only list the ANALYZE statements it would run, as `ANALYZE "main"."table"`.
  const planned = await sql<{ optimize: string }>`pragma optimize = 0x10003`.execute(db.kysely);
  for (const { optimize } of planned.rows) {
    const table = /^ANALYZE "main"\."(.+)"$/.exec(optimize)?.[1]?.replaceAll('""', '"');
    if (table === undefined) continue;
    // A table counts its rows as part of the ANALYZE of a whole index; with none but partial
    // indexes (or none at all) only the table's own ANALYZE writes its row count.
    const indexes = (await sql<{ name: string; partial: number }>`select name, partial from pragma_index_list(${table})`.execute(db.kysely)).rows;
    for (const name of indexes.some((i) => !i.partial) ? indexes.map((i) => i.name) : [table]) {
      await sql`analyze ${sql.id(name)}`.execute(db.kysely);
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
  }
}
