import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.ts';

// Every write appends to the change log in its own transaction, so each b-tree the log touches is
// one more page a commit writes to the WAL, and a checkpoint writes back (docs/events.md §Storage).
// - `events_occurred` goes: the retention sweep finds its boundary by walking the events in `seq`
//   order from the oldest (src/changes/repository.ts), the order they were appended in, and a
//   replay reads a workspace's events through `events_workspace_seq`.
// - On SQLite `field_history` becomes a WITHOUT ROWID table: its primary key is the table, where a
//   rowid table kept the rows and the key in two b-trees. PostgreSQL keeps its heap and key index.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists events_occurred`.execute(db);
  if (isPostgres(db)) return;
  await sql`create table field_history_clustered (
    record_id text not null,
    field text not null,
    seq integer not null,
    workspace_id text not null,
    value text,
    recorded_at text not null,
    is_create integer not null,
    constraint field_history_pk primary key (record_id, field, seq)
  ) without rowid`.execute(db);
  await sql`insert into field_history_clustered (record_id, field, seq, workspace_id, value, recorded_at, is_create)
    select record_id, field, seq, workspace_id, value, recorded_at, is_create from field_history`.execute(db);
  await sql`drop table field_history`.execute(db);
  await sql`alter table field_history_clustered rename to field_history`.execute(db);
}
