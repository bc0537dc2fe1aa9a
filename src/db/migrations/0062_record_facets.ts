import { type Kysely, sql } from 'kysely';
import { defineRank, rankRebuildAll } from '../rank/index.ts';

// The ranked sets of a field's values (docs/filtering.md §Ranked values): one row per record and
// value of a field whose definition lists its values, keyed (workspace, type, field, value,
// createdAt, id), so that the records holding one value are a ranked partition of their own and a
// page of them at any offset reads what the first page reads. The fields so defined when this
// migration was written: a task's `$status`; its rows come from the value index.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = sql`${0}`.compile(db).sql === '$1';
  await sql`create table record_facets (workspace_id text not null, object_type text not null, field text not null,
    value_text text not null, created_at text not null, record_id text not null,
    primary key (workspace_id, object_type, field, value_text, created_at, record_id)) ${sql.raw(pg ? '' : 'without rowid')}`.execute(db);
  // A rewrite of a record reads and removes its rows by record id.
  await db.schema.createIndex('record_facets_record').on('record_facets').columns(['record_id']).execute();
  await sql`insert into record_facets (workspace_id, object_type, field, value_text, created_at, record_id)
    select v.workspace_id, v.object_type, v.field, v.value_text, r.created_at, r.id
    from record_values v join records r on r.id = v.record_id
    where v.object_type = 'task' and v.field = '$status' and v.value_text is not null`.execute(db);
  await rankRebuildAll(
    db,
    defineRank({
      name: 'facets',
      table: 'record_facets',
      by: ['workspace_id', 'object_type', 'field', 'value_text'],
      ts: 'created_at',
      id: 'record_id',
      appends: true,
    }),
  );
}
