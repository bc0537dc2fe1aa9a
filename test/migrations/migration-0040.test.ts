// Migration 0040_change_log on a database that already holds records, on both databases: each
// record gets its one starting history entry, its value of the field then (null when unset),
// isCreate false, recorded at its updatedAt; a change after the migration comes on top of it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { updateRecord } from '../../src/records/service.ts';
import { fieldHistory } from '../../src/records/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { write } from '../../src/db/write.ts';

for (const dialect of testDialects()) {
  describe(`migration 0040_change_log [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0040' });
      const db = tdb.db.kysely as any;
      await db.insertInto('workspaces').values({ id: 'ws_a', name: 'A', created_at: '2026-01-01T00:00:00.000Z' }).execute();
      await db
        .insertInto('records')
        .values({
          id: 'acc_old',
          workspace_id: 'ws_a',
          kind: 'account',
          external_id: null,
          fields: JSON.stringify({ $name: 'Old name' }),
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-02-01T00:00:00.000Z',
        })
        .execute();
    });
    after(async () => tdb.drop());

    test('existing records start with one entry: their value then, isCreate false, at updatedAt', async () => {
      await migrate(tdb.db);
      const ctx = operatorCtx(tdb.db.kysely, 'ws_a', { now: Date.parse('2026-03-01T00:00:00.000Z') });
      const type = RECORD_TYPES.account;
      const name = await fieldHistory(ctx, { type, id: 'acc_old', fieldKey: '$name', limit: 20 });
      assert.deepEqual(name, {
        data: [{ value: 'Old name', valueType: 'TEXT', displayValue: 'Old name', recordedAt: '2026-02-01T00:00:00.000Z', isCreate: false }],
        hasMore: false,
        nextCursor: null,
      });
      const unset = await fieldHistory(ctx, { type, id: 'acc_old', fieldKey: '$website', limit: 20 });
      assert.deepEqual(unset.data, [{ value: null, valueType: 'URL', displayValue: null, recordedAt: '2026-02-01T00:00:00.000Z', isCreate: false }]);

      await write(tdb.db.kysely, (tx) => updateRecord({ ...ctx, db: tx }, { type, id: 'acc_old', fields: { $name: 'New name' } }));
      const after = await fieldHistory(ctx, { type, id: 'acc_old', fieldKey: '$name', limit: 1 });
      assert.deepEqual(
        after.data.map((e) => [e.value, e.recordedAt]),
        [['New name', '2026-03-01T00:00:00.000Z']],
      );
      assert.equal(after.hasMore, true);
      const rest = await fieldHistory(ctx, { type, id: 'acc_old', fieldKey: '$name', limit: 1, after: after.nextCursor! });
      assert.deepEqual(
        rest.data.map((e) => [e.value, e.isCreate]),
        [['Old name', false]],
      );
      assert.equal(rest.nextCursor, null);
    });
  });
}
