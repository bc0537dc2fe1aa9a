// Migration 0014_definition_order on a database that already holds custom definitions, on both
// databases: each type's fields and relationships are numbered from 0 in the order they were
// shown before (created_at, then id), per workspace and type, and new ones go after them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { addField, loadDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

for (const dialect of testDialects()) {
  describe(`migration 0014_definition_order [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0014' });
      const db = tdb.db.kysely as any;
      await db
        .insertInto('workspaces')
        .values(['ws_a', 'ws_b'].map((id) => ({ id, name: id, created_at: '2026-01-01T00:00:00.000Z' })))
        .execute();
      const field = (id: string, ws: string, type: string, key: string, at: string) => ({
        id,
        workspace_id: ws,
        object_type: type,
        key,
        label: key,
        description: null,
        value_type: 'TEXT',
        config: '{}',
        created_at: `2026-02-01T00:00:00.00${at}Z`,
      });
      await db
        .insertInto('field_definitions')
        .values([
          field('fld_3', 'ws_a', 'account', 'third', '2'),
          field('fld_2', 'ws_a', 'account', 'second', '1'),
          field('fld_1', 'ws_a', 'account', 'first', '1'),
          field('fld_9', 'ws_a', 'contact', 'only', '5'),
          field('fld_0', 'ws_b', 'account', 'other', '9'),
        ])
        .execute();
      await db
        .insertInto('relationship_definitions')
        .values(
          ['rld_b', 'rld_a'].map((id) => ({
            id,
            workspace_id: 'ws_a',
            object_type: 'account',
            key: id.replace('rld_', 'rel_'),
            label: id,
            description: null,
            cardinality: 'has_one',
            target_type: 'contact',
            created_at: '2026-02-01T00:00:00.000Z',
          })),
        )
        .execute();
    });
    after(async () => tdb.drop());

    test('positions follow the earlier order per workspace and type; new definitions go last', async () => {
      await migrate(tdb.db);
      const db = tdb.db.kysely;
      const plain = (rows: Array<{ id: string; position: number }>) => rows.map((r) => ({ id: r.id, position: Number(r.position) }));
      const fields = plain(await db.selectFrom('field_definitions').select(['id', 'position']).orderBy('id').execute());
      assert.deepEqual(fields, [
        { id: 'fld_0', position: 0 },
        { id: 'fld_1', position: 0 },
        { id: 'fld_2', position: 1 },
        { id: 'fld_3', position: 2 },
        { id: 'fld_9', position: 0 },
      ]);
      const rels = plain(await db.selectFrom('relationship_definitions').select(['id', 'position']).orderBy('id').execute());
      assert.deepEqual(rels, [
        { id: 'rld_a', position: 0 },
        { id: 'rld_b', position: 1 },
      ]);
      const ctx = operatorCtx(db, 'ws_a', { now: Date.parse('2026-01-01T00:00:00Z') });
      await addField(ctx, { objectType: 'account', key: 'fourth', label: 'Fourth', valueType: 'TEXT' });
      const defs = (await loadDefinitions(ctx, { objectType: 'account' }))!;
      assert.deepEqual(
        [...defs.fields.keys()].filter((k) => !k.startsWith('$')),
        ['first', 'second', 'third', 'fourth'],
      );
      assert.deepEqual(
        [...defs.relationships.keys()].filter((k) => !k.startsWith('$')),
        ['rel_a', 'rel_b'],
      );
    });
  });
}
