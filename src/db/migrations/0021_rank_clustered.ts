import { type Kysely, sql } from 'kysely';

// On SQLite, the ranked index's entries live in the table's primary key itself (WITHOUT ROWID),
// as PostgreSQL reads them through its primary-key index. A page sums and walks the entries of
// one scope and level; with a rowid table each entry read through the key also read the row for
// its count, and once statistics said nearly every entry belonged to one scope (one big listing,
// as in a single-workspace install), the planner preferred scanning the whole table to that
// double read: every page then read every entry of every level (docs/performance.md §Plans that
// must not depend on statistics). Clustered, the key is the only way in and the cheaper one.
export async function up(db: Kysely<any>): Promise<void> {
  if (sql`${0}`.compile(db).sql === '$1') return;
  await sql`create table rank_buckets_clustered (
      scope text not null, level integer not null, lo_ts text not null, lo_id text not null, n integer not null,
      constraint rank_buckets_pk primary key (scope, level, lo_ts, lo_id)) without rowid`.execute(db);
  await sql`insert into rank_buckets_clustered (scope, level, lo_ts, lo_id, n) select scope, level, lo_ts, lo_id, n from rank_buckets`.execute(db);
  await sql`drop table rank_buckets`.execute(db);
  await sql`alter table rank_buckets_clustered rename to rank_buckets`.execute(db);
}
