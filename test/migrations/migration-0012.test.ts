// Migration 0012_filter_index on a database that already holds records, on both databases: the
// trigram index is filled for the EMAIL, TELEPHONE and URL values there are (system and custom
// fields), once per record, field and trigram, so `contains` finds records written before it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate, MIGRATIONS } from '../../src/db/migrate.ts';
import { filteredPage, parseFilters } from '../../src/records/filter/service.ts';
import { loadDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const at = '2026-03-01T10:00:00.000Z';

for (const dialect of testDialects()) {
  describe(`migration 0012_filter_index [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0009' });
      const db = tdb.db.kysely as any;
      await db.insertInto('workspaces').values({ id: 'ws_a', name: 'A', created_at: at }).execute();
      await db
        .insertInto('field_definitions')
        .values({
          id: 'fld_x',
          workspace_id: 'ws_a',
          object_type: 'account',
          key: 'site',
          label: 'Site',
          description: null,
          value_type: 'URL',
          config: '{}',
          created_at: at,
        })
        .execute();
      const rec = (id: string, kind: string) => ({ id, workspace_id: 'ws_a', kind, external_id: null, fields: '{}', created_at: at, updated_at: at });
      await db
        .insertInto('records')
        .values([rec('con_1', 'contact'), rec('con_2', 'contact'), rec('acc_1', 'account')])
        .execute();
      const v = (record_id: string, object_type: string, field: string, value_text: string) => ({
        workspace_id: 'ws_a',
        object_type,
        field,
        value_text,
        value_num: null,
        record_id,
      });
      await db
        .insertInto('record_values')
        .values([
          v('con_1', 'contact', '$email', 'ann@acme.test'),
          v('con_1', 'contact', '$email', 'ann@home.test'),
          v('con_1', 'contact', '$name', 'ann acme'),
          v('con_2', 'contact', '$email', 'bo@other.test'),
          v('acc_1', 'account', 'site', 'https://acme.test'),
        ])
        .execute();
    });
    after(async () => tdb.drop());

    test('the trigrams of existing contains-able values, and only those', async () => {
      // This migration's own layout, which migration 0018 replaced.
      await migrate(tdb.db, Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name <= '0012_filter_index')));
      const db = tdb.db.kysely;
      type Row = { field: string; trigram: string; record_id: string };
      const rows = (await (db as any).selectFrom('record_trigrams').selectAll().orderBy('record_id').orderBy('field').orderBy('trigram').execute()) as Row[];
      const of = (id: string, field: string) => rows.filter((r) => r.record_id === id && r.field === field).map((r) => r.trigram);
      // ann@acme.test and ann@home.test share ann, nn@ and .te, est, st… once each.
      const con1 = new Set([...'ann@acme.test'.slice(0, -2)].map((_, i) => 'ann@acme.test'.slice(i, i + 3)));
      for (const t of [...'ann@home.test'.slice(0, -2)].map((_, i) => 'ann@home.test'.slice(i, i + 3))) con1.add(t);
      assert.deepEqual(of('con_1', '$email'), [...con1].sort());
      assert.equal(of('con_1', '$name').length, 0);
      assert.ok(of('acc_1', 'site').includes('acm'));
      await migrate(tdb.db);
      const ctx = operatorCtx(db, 'ws_a');
      const defs = (await loadDefinitions(ctx, { objectType: 'contact' }))!;
      const got = await filteredPage(ctx, { defs, filters: parseFilters({ $email: 'HOME.T' }, defs), page: { limit: 25, offset: 0 } });
      assert.deepEqual(got.ids, ['con_1']);
    });
  });
}
