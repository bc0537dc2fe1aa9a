import { type Kysely, sql } from 'kysely';
import { SYSTEM_CATALOGUES } from '../../definitions/catalogue.ts';
import { trigrams } from '../../records/index/trigrams.ts';
import type { ValueType } from '../../lib/resource-schemas.ts';
import type { RecordValuesTable } from '../../records/tables.ts';

const CONTAINS: readonly ValueType[] = ['EMAIL', 'TELEPHONE', 'URL'];

interface TrigramRow {
  workspace_id: string;
  object_type: string;
  field: string;
  trigram: string;
  record_id: string;
}

/** The rows of this table's layout (migration 0018 replaced it): distinct per record, field and trigram. */
function trigramRows(rows: readonly RecordValuesTable[], key: string): TrigramRow[] {
  const seen = new Map<string, Set<string>>();
  const out: TrigramRow[] = [];
  for (const r of rows) {
    if (r.field !== key || r.value_text === null) continue;
    let given = seen.get(r.record_id);
    if (given === undefined) seen.set(r.record_id, (given = new Set()));
    for (const trigram of trigrams(r.value_text)) {
      if (given.has(trigram)) continue;
      given.add(trigram);
      out.push({ workspace_id: r.workspace_id, object_type: r.object_type, field: r.field, trigram, record_id: r.record_id });
    }
  }
  return out;
}

// The indexes of list filters (docs/filtering.md §Indexes): the trigram table of `contains`,
// filled for the records that exist, and on PostgreSQL a prefix index of record_values in code
// point order ("C"), whatever the database's collation.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('record_trigrams')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('trigram', 'text', (c) => c.notNull())
    .addColumn('record_id', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('record_trigrams_lookup')
    .on('record_trigrams')
    .columns(['workspace_id', 'object_type', 'field', 'trigram', 'record_id'])
    .execute();
  await db.schema.createIndex('record_trigrams_record').on('record_trigrams').column('record_id').execute();
  if (sql`${0}`.compile(db).sql === '$1') {
    await sql`create index record_values_prefix on record_values (workspace_id, object_type, field, value_text collate "C", record_id)`.execute(db);
  }

  // Which fields hold trigrams: the system ones of the catalogue and the custom ones defined.
  const system = Object.entries(SYSTEM_CATALOGUES).flatMap(([type, c]) =>
    Object.entries(c.fields)
      .filter(([, f]) => CONTAINS.includes(f.valueType))
      .map(([key]) => ({ type, key })),
  );
  const custom = await db
    .selectFrom('field_definitions')
    .select(['object_type as type', 'key'])
    .where('value_type', 'in', [...CONTAINS])
    .distinct()
    .execute();
  for (const { type, key } of [...system, ...(custom as { type: string; key: string }[])]) {
    let after = '';
    for (;;) {
      const rows = (await db
        .selectFrom('record_values')
        .selectAll()
        .where('object_type', '=', type)
        .where('field', '=', key)
        .where('record_id', '>', after)
        .orderBy('record_id')
        .limit(5000)
        .execute()) as RecordValuesTable[];
      if (rows.length === 0) break;
      // Trigrams per record: a record's rows must be complete in one batch, so the last record of
      // a full batch is read again with the next one.
      const last = rows.length === 5000 ? rows.at(-1)!.record_id : null;
      const done = last === null ? rows : rows.filter((r) => r.record_id !== last);
      if (done.length === 0) throw new Error(`record ${last} has more than 5000 values of ${key}`);
      const out = trigramRows(done, key);
      for (let i = 0; i < out.length; i += 1000)
        await db
          .insertInto('record_trigrams')
          .values(out.slice(i, i + 1000))
          .execute();
      if (last === null) break;
      after = done.at(-1)!.record_id;
    }
  }
}
