// Migration 0080_user_email_keys on both databases (docs/design.md §Members, docs/deploy.md): users
// stored before it get their address's key; where one workspace holds both spellings of an
// internationalized domain as two users, both are kept, the earlier one holds the key (found by
// address under either spelling, a duplicate refused), the later one none, and the migration
// counts it. The same address in another workspace is no clash.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createUser, findUserRef } from '../../src/users/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-03-01T10:00:00.000Z';
const user = (id: string, workspace_id: string, email: string) => ({
  id,
  workspace_id,
  external_id: `x-${id}`,
  email,
  first_name: null,
  last_name: null,
  profile_image_url: null,
  role: 'member',
  created_at: AT,
  updated_at: AT,
});

for (const dialect of testDialects()) {
  describe(`migration 0080_user_email_keys [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0080' });
      const db = tdb.db.kysely as any;
      await db
        .insertInto('workspaces')
        .values([
          { id: 'ws_a', name: 'a', created_at: AT },
          { id: 'ws_b', name: 'b', created_at: AT },
        ])
        .execute();
      await db
        .insertInto('users')
        .values([
          user('usr_1', 'ws_a', 'ann@bücher.example'),
          user('usr_2', 'ws_a', 'ann@xn--bcher-kva.example'),
          user('usr_3', 'ws_a', 'bo@acme.test'),
          user('usr_4', 'ws_b', 'ann@xn--bcher-kva.example'),
        ])
        .execute();
      takeMigrationNotes();
    });
    after(() => tdb.drop());

    test('users take their keys; of two spellings of one address the earlier user holds it, both kept and counted', async () => {
      await migrate(tdb.db);
      const db = tdb.db.kysely as any;
      const rows = (await db.selectFrom('users').select(['id', 'email', 'email_key']).orderBy('id').execute()).map((r: object) => ({ ...r }));
      assert.deepEqual(rows, [
        { id: 'usr_1', email: 'ann@bücher.example', email_key: 'ann@xn--bcher-kva.example' },
        { id: 'usr_2', email: 'ann@xn--bcher-kva.example', email_key: null },
        { id: 'usr_3', email: 'bo@acme.test', email_key: 'bo@acme.test' },
        { id: 'usr_4', email: 'ann@xn--bcher-kva.example', email_key: 'ann@xn--bcher-kva.example' },
      ]);
      const notes = takeMigrationNotes().filter((n) => n.migration === '0080_user_email_keys');
      assert.deepEqual(
        notes.map((n) => n.counts),
        [{ clashes: 1 }],
      );
      const a = operatorCtx(db, 'ws_a');
      for (const ref of ['ann@bücher.example', 'ann@xn--bcher-kva.example']) assert.equal(await findUserRef(a, { ref }), 'usr_1', ref);
      assert.equal(await findUserRef(a, { ref: 'x-usr_2' }), 'usr_2', 'the later one by its externalId');
      await assert.rejects(createUser(a, { email: 'ANN@Bücher.example' }), /already exists/u);
      assert.equal(await findUserRef(operatorCtx(db, 'ws_b'), { ref: 'ann@bücher.example' }), 'usr_4');
    });
  });
}
