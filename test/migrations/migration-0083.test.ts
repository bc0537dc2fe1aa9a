// Migration 0083_rooted_domains (docs/records.md §Values stored before 0083) on both databases:
// from a database at 0081 whose value index holds an address or a website written with its
// domain's final dot with that dot, the records holding one have their value index written again
// without it, so that a meeting's address and a unique check find them; other records' rows and
// every stored value stay; two records holding one address of a unique field both keep it, and
// the migration counts them. Users take the key without the dot, unless another user holds it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { addField, loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { accountsByHosts, contactIdsByEmails, valueTaken } from '../../src/records/index/repository.ts';
import { findUserRef } from '../../src/users/service.ts';
import { writeRecord } from '../helpers/filters-fixtures.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-03-01T10:00:00.000Z';
const WS = 'ws_r';
const user = (id: string, email: string, email_key: string | null) => ({
  id,
  workspace_id: WS,
  external_id: `x-${id}`,
  email,
  email_key,
  first_name: null,
  last_name: null,
  profile_image_url: null,
  role: 'member',
  created_at: AT,
  updated_at: AT,
});

for (const dialect of testDialects()) {
  describe(`migration 0083_rooted_domains [${dialect}]`, () => {
    let tdb: TestDb;
    const db = () => tdb.db.kysely as any;
    const rowsOf = async (id: string) =>
      (
        await sql<{
          field: string;
          value_text: string;
        }>`select field, value_text from record_values where record_id = ${id} order by field, value_text`.execute(db())
      ).rows.map((r) => ({ field: r.field, value_text: r.value_text }));
    let untouched: unknown;

    /** Writes a record, then gives the index rows `rooted` names the final dot the earlier index kept. */
    async function writeOld(kind: string, id: string, values: Record<string, unknown>, rooted: string[] = []) {
      const defs = (await loadDefinitions(operatorCtx(db(), WS), { objectType: kind })) as TypeDefinitions;
      await writeRecord(db(), defs, WS, { id, createdAt: AT, values });
      for (const text of rooted)
        await db()
          .updateTable('record_values')
          .set({ value_text: `${text}.` })
          .where('record_id', '=', id)
          .where('value_text', '=', text)
          .execute();
    }

    before(async () => {
      tdb = await createTestDb(dialect, { before: '0083' });
      await db().insertInto('workspaces').values({ id: WS, name: WS, created_at: AT }).execute();
      await addField(operatorCtx(db(), WS), { objectType: 'contact', key: 'work', label: 'Work', valueType: 'EMAIL', unique: true });
      await writeOld('contact', 'con_1', { $email: ['Ann@Acme.test.'] }, ['ann@acme.test']);
      await writeOld('contact', 'con_2', { work: 'bo@acme.test.' }, ['bo@acme.test']);
      // The form without the dot of con_2's unique address, taken while the index told them apart.
      await writeOld('contact', 'con_3', { work: 'BO@acme.test' });
      await writeOld('contact', 'con_4', { $email: ['cy@acme.test'] });
      await writeOld('account', 'acc_1', { $name: 'Globex', $website: ['https://Globex.test./about'] }, ['globex.test']);
      untouched = await rowsOf('con_4');
      await db()
        .insertInto('users')
        .values([
          user('usr_1', 'eve@acme.test.', 'eve@acme.test.'),
          user('usr_2', 'dan@acme.test', 'dan@acme.test'),
          user('usr_3', 'dan@acme.test.', 'dan@acme.test.'),
          // Two spellings of one rooted address: usr_5 is its user (0080 gave it the key), usr_4
          // keeps its row without one, and stays so.
          user('usr_4', 'fay@acme.test.', null),
          user('usr_5', 'FAY@acme.test.', 'fay@acme.test.'),
        ])
        .execute();
      takeMigrationNotes();
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('addresses and websites written with the dot are indexed without it; values and other rows stay; clashes are kept and counted', async () => {
      // The key without the dot, and beside it the address as written, with it (and a space), for `contains`.
      assert.deepEqual(await rowsOf('con_1'), [
        { field: '$email', value_text: 'ann@acme.test' },
        { field: '$email', value_text: 'ann@acme.test. ' },
      ]);
      assert.deepEqual(await rowsOf('con_2'), [
        { field: 'work', value_text: 'bo@acme.test' },
        { field: 'work', value_text: 'bo@acme.test. ' },
      ]);
      assert.deepEqual(await rowsOf('con_3'), [{ field: 'work', value_text: 'bo@acme.test' }]);
      assert.deepEqual(await rowsOf('con_4'), untouched);
      assert.deepEqual(
        (await rowsOf('acc_1')).filter((r) => r.field === '$website.host'),
        [{ field: '$website.host', value_text: 'globex.test' }],
      );
      const stored = await db().selectFrom('records').select(['fields', 'updated_at']).where('id', '=', 'con_2').executeTakeFirstOrThrow();
      assert.deepEqual([JSON.parse(stored.fields), stored.updated_at], [{ work: 'bo@acme.test.' }, AT]);
      const notes = takeMigrationNotes().filter((n) => n.migration === '0083_rooted_domains');
      assert.deepEqual(notes[0]?.counts, { records: 3, clashes: 1, users: 4, userClashes: 2 });
      const listed = await sql<{ name: string }>`select name from migrations_run_beside order by name`.execute(db());
      assert.ok(listed.rows.some((r) => r.name === '0083_rooted_domains'));
    });

    test("a meeting's address, a unique check and a user lookup find the migrated rows", async () => {
      assert.deepEqual([...(await contactIdsByEmails(db(), WS, ['ann@acme.test'])).values()], [['con_1']]);
      assert.deepEqual([...(await accountsByHosts(db(), WS, ['globex.test'])).values()], [['acc_1']]);
      assert.equal(await valueTaken(db(), WS, 'contact', 'work', { text: 'bo@acme.test' }, 'con_new'), true);
      const users = (await db().selectFrom('users').select(['id', 'email_key']).orderBy('id').execute()).map((r: object) => ({ ...r }));
      assert.deepEqual(users, [
        { id: 'usr_1', email_key: 'eve@acme.test' },
        { id: 'usr_2', email_key: 'dan@acme.test' },
        { id: 'usr_3', email_key: null },
        { id: 'usr_4', email_key: null },
        { id: 'usr_5', email_key: 'fay@acme.test' },
      ]);
      const c = operatorCtx(db(), WS);
      assert.equal(await findUserRef(c, { ref: 'eve@acme.test' }), 'usr_1');
      assert.equal(await findUserRef(c, { ref: 'dan@acme.test.' }), 'usr_2');
      assert.equal(await findUserRef(c, { ref: 'fay@acme.test' }), 'usr_5');
    });
  });
}
