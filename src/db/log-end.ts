// The settled end of the change log (docs/enrichment.md §Runs): the greatest `seq` at or below which
// every event is settled, committed or never to be (its transaction rolled back). A reader that
// follows the log past a durable cursor moves the cursor no further, or it would pass, for good,
// an event that commits after it read.
// - SQLite has one writer at a time and numbers events inside it: the last event a reader sees
//   is that end.
// - PostgreSQL numbers events from a sequence when they are inserted, so a transaction still open
//   may commit an event below the last one visible. Each call takes a mark: the last event
//   visible to its snapshot and the snapshot's xmax (the first transaction id not yet given out).
//   The mark is settled once the oldest transaction running is at or past that xmax: every
//   transaction that could hold an event at or below it has ended. This holds for an event whose
//   transaction had an id when the event was numbered, which a transaction has from its first
//   write: the log's readers rely on it only for events inserted after a row of their own (a
//   record's `<type>.created` follows the record's insert).
import { sql } from 'kysely';
import { isPostgres } from './dialect.ts';
import type { Executor } from './types.ts';

export interface LogEnd {
  /** The settled end as of this call; 0 for an empty log. It never moves back. */
  settled(db: Executor): Promise<number>;
}

/** Marks kept while a long transaction holds the horizon back: more only delay a later end. */
const MARKS = 64;

/** A reader's view of the settled end; on PostgreSQL it keeps the marks of its calls (in memory: a new one starts over). */
export function logEnd(): LogEnd {
  let end = 0;
  const marks: { last: number; xmax: bigint }[] = [];
  return {
    async settled(db) {
      if (!isPostgres(db)) {
        const r = await sql<{ last: number | null }>`select max(seq) as last from events`.execute(db);
        end = Math.max(end, Number(r.rows[0]?.last ?? 0));
        return end;
      }
      // One statement, one snapshot: the last event it sees and the transactions it does not.
      const r = await sql<{ last: string | null; xmin: string; xmax: string }>`select (select max(seq) from events) as last,
          cast(pg_snapshot_xmin(pg_current_snapshot()) as text) as xmin, cast(pg_snapshot_xmax(pg_current_snapshot()) as text) as xmax`.execute(db);
      const row = r.rows[0]!;
      if (marks.length < MARKS) marks.push({ last: Number(row.last ?? 0), xmax: BigInt(row.xmax) });
      const horizon = BigInt(row.xmin);
      while (marks.length > 0 && marks[0]!.xmax <= horizon) end = Math.max(end, marks.shift()!.last);
      return end;
    },
  };
}
