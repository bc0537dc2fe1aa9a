// Migration 0006_platform on a database that holds data of the earlier shape, on both databases:
// users' names become first and last names (split at the first space) and are counted; stored
// idempotent successes stay replayable under their operation, stored errors and pending claims go.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const at = '2026-03-01T10:00:00.000Z';

for (const dialect of testDialects()) {
  describe(`migration 0006_platform [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0005' });
      const db = tdb.db.kysely as any;
      await db
        .insertInto('workspaces')
        .values([
          { id: 'ws_a', name: 'A', created_at: at },
          { id: 'ws_b', name: 'B', created_at: at },
        ])
        .execute();
      const user = (id: string, ws: string, name: string | null) => ({
        id,
        workspace_id: ws,
        external_id: null,
        email: `${id}@x.test`,
        name,
        role: 'member',
        created_at: at,
        updated_at: at,
      });
      await db
        .insertInto('users')
        .values([
          user('usr_1', 'ws_a', 'Ann Marie Smith'),
          user('usr_2', 'ws_a', '  Cher '),
          user('usr_3', 'ws_a', null),
          user('usr_4', 'ws_a', '   '),
          user('usr_5', 'ws_b', 'Bo\tvan der Berg'),
        ])
        .execute();
      const key = (k: string, state: string, status: number | null) => ({
        workspace_id: 'ws_a',
        key: k,
        fingerprint: `fp-${k}`,
        state,
        status_code: status,
        body: status === null ? null : `{"k":"${k}"}`,
        locked_at: at,
        created_at: at,
      });
      await db
        .insertInto('idempotency_keys')
        .values([key('ok', 'done', 200), key('err', 'done', 400), key('pending', 'pending', null)])
        .execute();
      await migrate(tdb.db);
    });
    after(async () => tdb.drop());

    test('names become first and last names; the name column is gone', async () => {
      const rows = await tdb.db.kysely.selectFrom('users').selectAll().orderBy('id').execute();
      assert.deepEqual(
        rows.map((r) => [r.id, r.first_name, r.last_name, r.profile_image_url]),
        [
          ['usr_1', 'Ann', 'Marie Smith', null],
          ['usr_2', 'Cher', null, null],
          ['usr_3', null, null, null],
          ['usr_4', null, null, null],
          ['usr_5', 'Bo', 'van der Berg', null],
        ],
      );
      assert.ok(!('name' in (rows[0] as object)), 'one source of truth: no name column');
    });

    test('users are counted per workspace', async () => {
      const counts = await tdb.db.kysely.selectFrom('workspace_user_counts').selectAll().orderBy('workspace_id').execute();
      assert.deepEqual(
        counts.map((c) => [c.workspace_id, Number(c.user_count)]),
        [
          ['ws_a', 4],
          ['ws_b', 1],
        ],
      );
    });

    test('a stored success is kept under each idempotent operation; errors and pending claims are dropped', async () => {
      const rows = await tdb.db.kysely.selectFrom('idempotency_keys').selectAll().orderBy('operation').execute();
      assert.deepEqual(
        rows.map((r) => [r.operation, r.key, r.fingerprint, r.state, Number(r.status_code), r.body]),
        ['cancelFile', 'completeFile', 'createFile', 'createList', 'updateList'].map((op) => [op, 'ok', 'fp-ok', 'done', 200, '{"k":"ok"}']),
      );
    });
  });
}
