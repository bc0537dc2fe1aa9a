// Migration 0018_compact_trigrams on a database that already holds values and trigram rows of
// migration 0012's layout, on both databases: the postings (key, record_id) are rebuilt from the
// values, those of records that had no trigram row included, the old table and its indexes are
// gone, and `contains` finds the records written before it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate, MIGRATIONS } from '../../src/db/migrate.ts';
import { loadDefinitions } from '../../src/definitions/service.ts';
import { filteredPage, parseFilters } from '../../src/records/filter/service.ts';
import { fieldHash, trigramKey, trigrams } from '../../src/records/index/trigrams.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const BEFORE = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < '0018'));
const at = '2026-03-01T10:00:00.000Z';
// Enough value rows for several batches of the rebuild (5,000 rows each).
const MORE = Array.from({ length: 5200 }, (_, i) => `con_m${String(i).padStart(4, '0')}`);
const VALUES: [string, string, string][] = [
  ['con_1', '$email', 'ann@acme.test'],
  ['con_1', '$email', 'ann@home.test'],
  ['con_2', '$email', 'bo@other.test'],
  ...MORE.map((id, i): [string, string, string] => [id, '$email', `person.${i}.number${i * 7}@company${i}.example`]),
];

for (const dialect of testDialects()) {
  describe(`migration 0018_compact_trigrams [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { migrate: false });
      await migrate(tdb.db, BEFORE);
      const db = tdb.db.kysely as any;
      await db.insertInto('workspaces').values({ id: 'ws_a', name: 'A', created_at: at }).execute();
      const rec = (id: string) => ({ id, workspace_id: 'ws_a', kind: 'contact', external_id: null, fields: '{}', created_at: at, updated_at: at });
      const ids = ['con_1', 'con_2', ...MORE];
      for (let i = 0; i < ids.length; i += 1000)
        await db
          .insertInto('records')
          .values(ids.slice(i, i + 1000).map(rec))
          .execute();
      await db
        .insertInto('record_values')
        .values(
          VALUES.map(([record_id, field, value_text]) => ({ workspace_id: 'ws_a', object_type: 'contact', field, value_text, value_num: null, record_id })),
        )
        .execute();
      // The rows migration 0012's layout held: con_2's are missing, as for a contact created by a
      // meeting before migration 0018 (docs/meetings.md), so it must be rebuilt from its values.
      const old = new Map<string, object>();
      for (const [record_id, field, text] of VALUES.slice(0, 2))
        for (const trigram of trigrams(text)) old.set(`${record_id}|${trigram}`, { workspace_id: 'ws_a', object_type: 'contact', field, trigram, record_id });
      const rows = [...old.values()];
      for (let i = 0; i < rows.length; i += 1000)
        await db
          .insertInto('record_trigrams')
          .values(rows.slice(i, i + 1000))
          .execute();
    });
    after(async () => tdb.drop());

    test('one posting per record and trigram key of its values; contains finds the records written before', async () => {
      await migrate(tdb.db);
      const db = tdb.db.kysely;
      const r = await sql<{ key: unknown; record_id: string }>`select key, record_id from record_trigrams order by record_id, key`.execute(db);
      const got = r.rows.map((x) => `${x.record_id}|${Number(x.key)}`);
      const scope = fieldHash('ws_a', 'contact', '$email');
      const want = new Set(VALUES.flatMap(([id, , text]) => trigrams(text).map((t) => `${id}|${trigramKey(scope, t)}`)));
      assert.deepEqual(got.sort(), [...want].sort());
      // Read from this database's own tables: Kysely's introspection reads every schema of the
      // server, and another test dropping its schema meanwhile made it fail ("schema … does not
      // exist", from has_schema_privilege on that schema's name).
      const left = tdb.schema
        ? await sql`select table_name from information_schema.tables where table_schema = ${tdb.schema} and table_name = 'record_trigrams_0012'`.execute(db)
        : await sql`select name from sqlite_master where type = 'table' and name = 'record_trigrams_0012'`.execute(db);
      assert.equal(left.rows.length, 0);
      const ctx = operatorCtx(db, 'ws_a');
      const defs = (await loadDefinitions(ctx, { objectType: 'contact' }))!;
      const page = async (needle: string) =>
        (await filteredPage(ctx, { defs, filters: parseFilters({ '$email[contains]': needle }, defs), page: { limit: 25, offset: 0 } })).ids;
      assert.deepEqual(await page('HOME.T'), ['con_1']);
      assert.deepEqual((await page('.test')).sort(), ['con_1', 'con_2']);
      assert.deepEqual(await page('number36393@'), ['con_m5199']);
    });
  });
}
