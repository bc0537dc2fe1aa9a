import { type Kysely, sql } from 'kysely';
import { SYSTEM_CATALOGUES } from '../../definitions/catalogue.ts';
import { trigramRows } from '../../records/index/repository.ts';
import type { ValueType } from '../../lib/resource-schemas.ts';
import type { RecordValuesTable } from '../../records/tables.ts';

const CONTAINS: readonly ValueType[] = ['EMAIL', 'TELEPHONE', 'URL'];
const BATCH = 5000;

// The compact trigram index (docs/filtering.md §Indexes): one posting is (key, record_id), the key
// a 53-bit hash of workspace, type, field and trigram, and the primary key is the whole table
// (WITHOUT ROWID on SQLite), with no index by record. Migration 0012's table and its two indexes
// are dropped and the postings rebuilt from the value index, so that records whose trigrams were
// never written (contacts created by meetings, docs/meetings.md) are found as well.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = sql`${0}`.compile(db).sql === '$1';
  await sql`drop table record_trigrams`.execute(db);
  await sql`create table record_trigrams (key bigint not null, record_id text not null, primary key (key, record_id))
    ${sql.raw(pg ? '' : 'without rowid')}`.execute(db);
  // A `contains` reads the postings of its rarest trigram. PostgreSQL plans a named statement once
  // for any key after five runs, estimating rows / distinct keys per key (some 2,000 at 100,000
  // contacts), and then hashed a scan of every record of the workspace; told that keys are nearly
  // unique, it reads the candidates' records by primary key, as for a known rare key.
  if (pg) await sql`alter table record_trigrams alter column key set (n_distinct = -0.5)`.execute(db);

  // Which fields hold trigrams: the system ones of the catalogue in every workspace, the custom
  // ones in the workspaces that define them.
  const system = Object.entries(SYSTEM_CATALOGUES).flatMap(([type, c]) =>
    Object.entries(c.fields)
      .filter(([, f]) => CONTAINS.includes(f.valueType))
      .map(([key]) => ({ ws: null as string | null, type, key })),
  );
  const custom = (await db
    .selectFrom('field_definitions')
    .select(['workspace_id as ws', 'object_type as type', 'key'])
    .where('value_type', 'in', [...CONTAINS])
    .distinct()
    .execute()) as { ws: string; type: string; key: string }[];
  for (const { ws, type, key } of [...system, ...custom]) {
    let after = '';
    for (;;) {
      const rows = (await db
        .selectFrom('record_values')
        .selectAll()
        .$if(ws !== null, (q) => q.where('workspace_id', '=', ws))
        .where('object_type', '=', type)
        .where('field', '=', key)
        .where('record_id', '>', after)
        .orderBy('record_id')
        .limit(BATCH)
        .execute()) as RecordValuesTable[];
      if (rows.length === 0) break;
      // Postings are distinct per record: a record's rows must be complete in one batch, so the
      // last record of a full batch is read again with the next one.
      const last = rows.length === BATCH ? rows.at(-1)!.record_id : null;
      const done = last === null ? rows : rows.filter((r) => r.record_id !== last);
      if (done.length === 0) throw new Error(`record ${last} has more than ${BATCH} values of ${key}`);
      // A key shared by two fields of one record (docs/filtering.md §Indexes) is one posting.
      const postings = trigramRows(done, new Set([key]));
      for (let i = 0; i < postings.length; i += 2000) {
        const values = sql.join(postings.slice(i, i + 2000).map((p) => sql`(${p.key}, ${p.record_id})`));
        await sql`insert into record_trigrams (key, record_id) values ${values} on conflict do nothing`.execute(db);
      }
      if (last === null) break;
      after = done.at(-1)!.record_id;
    }
  }
}
