// The settled end of the change log (docs/enrichment.md §Runs): the greatest `seq` at or below which
// every event is settled, committed or never to be (its transaction rolled back). A reader that
// follows the log past a durable cursor moves the cursor no further, or it would pass, for good,
// an event that commits after it read.
// - SQLite has one writer at a time and numbers events inside it: the last event a reader sees
//   is that end.
// - PostgreSQL numbers events from a sequence when they are inserted, so a transaction still open
//   may commit an event below the last one visible. Each call takes a mark: the last event
//   visible to its statement's snapshot, and the transactions that then hold the lock every
//   insert into the log takes on it before numbering its row (RowExclusiveLock on `events`, held
//   until the transaction ends). The mark is settled once none of them holds it any more: each
//   event at or below the mark was then visible, or belonged to one of them (one that committed
//   between the snapshot and the read of the locks is seen by any later statement). Only the
//   writers of this database's log count, not the transactions of the whole server.
import { sql } from 'kysely';
import { isPostgres } from './dialect.ts';
import type { Executor } from './types.ts';

export interface LogEnd {
  /** The settled end as of this call; 0 for an empty log. It never moves back. */
  settled(db: Executor): Promise<number>;
}

/** Marks kept while a long transaction writes the log: more would only settle later. */
const MARKS = 64;

/** A reader's view of the settled end; on PostgreSQL it keeps the marks of its calls (in memory: a new one starts over). */
export function logEnd(): LogEnd {
  let end = 0;
  const marks: { last: number; writers: Set<string> }[] = [];
  return {
    async settled(db) {
      if (!isPostgres(db)) {
        const r = await sql<{ last: number | null }>`select max(seq) as last from events`.execute(db);
        end = Math.max(end, Number(r.rows[0]?.last ?? 0));
        return end;
      }
      // One statement: the last event its snapshot sees, then the transactions that may hold one
      // below it (virtual transaction ids: unique, and a transaction has one before it writes).
      const r = await sql<{ last: string | null; writers: string | null }>`select (select max(seq) from events) as last,
          (select string_agg(l.virtualtransaction, ' ') from pg_locks as l
            where l.locktype = 'relation' and l.relation = cast('events' as regclass) and l.mode = 'RowExclusiveLock'
              and l.database = (select oid from pg_database where datname = current_database())) as writers`.execute(db);
      const row = r.rows[0]!;
      const writers = new Set(row.writers ? row.writers.split(' ') : []);
      if (marks.length < MARKS) marks.push({ last: Number(row.last ?? 0), writers });
      while (marks.length > 0 && ![...marks[0]!.writers].some((w) => writers.has(w))) end = Math.max(end, marks.shift()!.last);
      return end;
    },
  };
}
