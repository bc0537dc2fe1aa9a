import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.ts';

// The value index's text is compared in code point order on both databases (docs/filtering.md
// §Indexes): SQLite compares text as bytes of UTF-8, and on PostgreSQL `record_values.value_text`
// has the "C" collation itself, so that one index, `record_values_text`, answers equality, `in`,
// LIKE and the ranges of `startsWith` and `set`, and `record_values_prefix`, a copy of its entries
// in "C" for the ranges beside an index in the database's collation, goes: every text value is
// written to one B-tree instead of two. `meeting_participants.email` takes the same
// collation: the meetings of a contact join it to the contact's `$email` values, PostgreSQL
// compares a "C" column with one in the database's collation in "C", and only an index in "C"
// then finds the participants by address. Equality is the same in either collation (both are
// deterministic); only the order of text changes, and the value index is never sorted by it.
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  // Only the collation changes: no rewrite of the tables; their indexes on the columns are rebuilt.
  await sql`alter table record_values alter column value_text type text collate "C"`.execute(db);
  await sql`alter table meeting_participants alter column email type text collate "C"`.execute(db);
  await sql`drop index record_values_prefix`.execute(db);
}
