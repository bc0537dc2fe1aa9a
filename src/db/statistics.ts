// Table statistics for the query planners (docs/design.md §Database statistics). PostgreSQL keeps
// its own through autovacuum, within about a minute of a large change. SQLite keeps none until
// asked: without them its planner guesses, and a guess once made a message page walk a
// workspace's whole index (docs/performance.md §Plans that must not depend on statistics).
// Statements on hot paths are written so that no plan can do that; fresh statistics are the second
// line.
import { sql } from 'kysely';
import { type Stat1Row, sampledStat, tableStat } from './sqlite/stat1.ts';
import type { Db } from './types.ts';
import { write } from './write.ts';

/** How long the write lock is left free after each index: a waiting writer tries every 4 ms at most (`beginImmediate`). */
const PAUSE_MS = 5;

/** How many entries of an index SQLite's analysis reads (`pragma analysis_limit`). */
const SAMPLE = 1000;

/**
 * A SQLite table with fewer rows gets no statistics (docs/design.md §Database statistics). A
 * connection's planner keeps the rows it read at its start however much the table grows since,
 * and one that takes a table for a small one scans all of it for a list of keys instead of looking
 * each key up; under this floor, a list of the sizes the code sends (up to 1,000 keys) is enough
 * for that. Without statistics the planner assumes a large table, whatever size it reaches.
 */
export const STATISTICS_FLOOR = 20_000;

/**
 * Brings statistics up to date where they are missing or stale: on SQLite the tables PRAGMA
 * optimize picks (never analyzed, or grown or shrunk many times since), each from a bounded sample
 * (analysis_limit), and none for a table under STATISTICS_FLOOR rows; on PostgreSQL, after a bulk
 * write (`bulk`), ANALYZE of the schema's tables, so that the first requests after an import do
 * not wait for autovacuum.
 *
 * An ANALYZE holds SQLite's write lock while it runs, and the sample bounds the rows it reads, not
 * its count of an index's entries: seconds for the indexes of a large import, which a server
 * sharing the file would wait to write. So each index's row is computed from reads, which take no
 * lock (src/db/sqlite/stat1.ts), and all the rows are written by one short transaction; an index
 * those reads cannot describe is analyzed by an ANALYZE of its own, with the lock left free for
 * PAUSE_MS after it (docs/design.md §Database statistics).
 */
export async function refreshStatistics(db: Db, opts: { bulk?: boolean } = {}): Promise<void> {
  if (db.dialect === 'postgres') {
    if (!opts.bulk) return;
    // Only this schema's tables: a bare ANALYZE would sample every schema of the database.
    const r = await sql<{ name: string }>`select quote_ident(tablename) as name from pg_tables where schemaname = current_schema()`.execute(db.kysely);
    if (r.rows.length > 0) await sql.raw(`analyze ${r.rows.map((t) => t.name).join(', ')}`).execute(db.kysely);
    return;
  }
  await sql`pragma analysis_limit = ${sql.lit(SAMPLE)}`.execute(db.kysely);
  // 0x10000: every table, not only those this connection has used; 0x2: those that need it;
  // 0x1: only list the ANALYZE statements it would run, as `ANALYZE "main"."table"`.
  const planned = await sql<{ optimize: string }>`pragma optimize = 0x10003`.execute(db.kysely);
  const computed: Stat1Row[] = [];
  const small: string[] = [];
  for (const { optimize } of planned.rows) {
    const table = /^ANALYZE "main"\."(.+)"$/.exec(optimize)?.[1]?.replaceAll('""', '"');
    if (table === undefined) continue;
    const indexes = (
      await sql<{ name: string; origin: string; partial: number }>`select name, origin, partial from pragma_index_list(${table})`.execute(db.kysely)
    ).rows;
    const rows: Stat1Row[] = [];
    // The table's row count: the largest first number of its rows (a whole index's, or the table's own).
    let count = 0;
    const noteCount = (stat: string | null | undefined) => (count = Math.max(count, Number(stat?.split(' ')[0] ?? 0)));
    // Whole indexes first: the first one counts the table, and a table under the floor needs no more.
    for (const index of [...indexes].sort((a, b) => a.partial - b.partial)) {
      const row = await sampledStat(db.kysely, table, index, SAMPLE);
      if (row) {
        rows.push(row);
        noteCount(row.stat);
      } else {
        await sql`analyze ${sql.id(index.name)}`.execute(db.kysely);
        noteCount((await sql<{ stat: string }>`select stat from sqlite_stat1 where idx = ${index.name}`.execute(db.kysely)).rows[0]?.stat);
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
      if (!index.partial && count < STATISTICS_FLOOR) break;
    }
    // A table counts its rows as part of the analysis of a whole index; with none but partial
    // indexes (or none at all) only the table's own ANALYZE writes its row count.
    if (!indexes.some((i) => !i.partial)) {
      const own = await tableStat(db.kysely, table);
      rows.push(own);
      noteCount(own.stat);
    }
    if (count < STATISTICS_FLOOR) small.push(table);
    else computed.push(...rows);
  }
  // A small table's rows go only where it has some: most refreshes then write nothing.
  const stale = small.length > 0 && (await hasStatistics(db, small));
  if (computed.length === 0 && !stale) return;
  const rows = computed.filter((c) => c.stat !== null).map((c) => sql`(${c.tbl}, ${c.idx}, ${c.stat})`);
  // A write of its own: it waits for the lock without stopping the thread (`beginImmediate`) and
  // holds it for four short statements. ANALYZE of the schema table analyzes nothing: it creates
  // sqlite_stat1 when missing, and makes this connection's planner read the rows again.
  await write(db.kysely, async (tx) => {
    await sql`analyze sqlite_schema`.execute(tx);
    if (computed.length > 0) {
      const keys = sql.join(computed.map((c) => sql`(${c.tbl}, ${c.idx})`));
      await sql`delete from sqlite_stat1 where exists (select 1 from (values ${keys}) k where k.column1 = sqlite_stat1.tbl and k.column2 is sqlite_stat1.idx)`.execute(
        tx,
      );
    }
    // Every row of a small table goes, those an ANALYZE of one of its indexes wrote included.
    if (stale) await sql`delete from sqlite_stat1 where tbl in (${sql.join(small)})`.execute(tx);
    if (rows.length > 0) await sql`insert into sqlite_stat1 (tbl, idx, stat) values ${sql.join(rows)}`.execute(tx);
    await sql`analyze sqlite_schema`.execute(tx);
  });
}

/** Whether sqlite_stat1 exists and holds a row of any of `tables`. */
async function hasStatistics(db: Db, tables: string[]): Promise<boolean> {
  const made = await sql<{ n: number }>`select count(*) as n from sqlite_schema where name = 'sqlite_stat1'`.execute(db.kysely);
  if (Number(made.rows[0]?.n ?? 0) === 0) return false;
  const r = await sql<{ n: number }>`select count(*) as n from sqlite_stat1 where tbl in (${sql.join(tables)})`.execute(db.kysely);
  return Number(r.rows[0]?.n ?? 0) > 0;
}
