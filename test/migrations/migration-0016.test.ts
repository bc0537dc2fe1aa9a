// Migration 0016_value_probe on a database that already holds values, on both databases: the probe
// index of filters holds the values in its key (docs/filtering.md §Indexes), and the rows written
// before it are found through it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

/** The key columns of the index `name`, in order. */
async function columns(tdb: TestDb, name: string): Promise<string[]> {
  const db = tdb.db.kysely;
  if (tdb.schema === undefined) {
    const r = await sql<{ name: string; key: number }>`select name, key from pragma_index_xinfo(${name}) where key = 1 order by seqno`.execute(db);
    return r.rows.map((x) => x.name);
  }
  const r = await sql<{ name: string }>`select a.attname as name from pg_index i
    join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
    cross join lateral unnest(i.indkey) with ordinality as k(attnum, pos)
    join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
    where c.relname = ${name} and n.nspname = ${tdb.schema} order by k.pos`.execute(db);
  return r.rows.map((x) => x.name);
}

for (const dialect of testDialects()) {
  describe(`migration 0016_value_probe [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0016' });
      const db = tdb.db.kysely as any;
      await db
        .insertInto('record_values')
        .values([
          { workspace_id: 'ws_a', object_type: 'contact', field: '$email', value_text: 'ann@acme.test', value_num: null, record_id: 'con_1' },
          { workspace_id: 'ws_a', object_type: 'contact', field: 'score', value_text: null, value_num: 7, record_id: 'con_1' },
        ])
        .execute();
    });
    after(() => tdb.drop());

    test('the probe index keys the values after record and field; rows written before are found', async () => {
      assert.deepEqual(await columns(tdb, 'record_values_record'), ['record_id', 'field']);
      await migrate(tdb.db);
      assert.deepEqual(await columns(tdb, 'record_values_record'), ['record_id', 'field', 'value_text', 'value_num']);
      const db = tdb.db.kysely as any;
      const rows = await db
        .selectFrom('record_values')
        .select(['field', 'value_text', 'value_num'])
        .where('record_id', '=', 'con_1')
        .orderBy('field')
        .execute();
      assert.deepEqual(
        rows.map((r: { field: string; value_text: string | null; value_num: unknown }) => [
          r.field,
          r.value_text,
          r.value_num === null ? null : Number(r.value_num),
        ]),
        [
          ['$email', 'ann@acme.test', null],
          ['score', null, 7],
        ],
      );
    });
  });
}
