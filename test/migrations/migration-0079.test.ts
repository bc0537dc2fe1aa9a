// Migration 0079_email_characters on a database holding e-mail addresses with control and invisible
// characters, stored before writes refused them, on both databases (docs/records.md §Values stored
// before 0079): an address that is one without its invisible characters is rewritten so, with its
// value index, in live records and in the trash's; one holding a control character, or no address
// without them, stays exactly as it was; the migration reports both counts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { write } from '../../src/db/write.ts';
import { addField, loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { contactIdsByEmails } from '../../src/records/index/repository.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { checkValue } from '../../src/records/values.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { trashRecord } from '../../src/trash/service.ts';
import { restore } from '../../src/trash/restore.ts';
import { writeRecord } from '../helpers/filters-fixtures.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-03-01T10:00:00.000Z';

for (const dialect of testDialects()) {
  describe(`migration 0079_email_characters [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0079' });
      const db = tdb.db.kysely as any;
      await db.insertInto('workspaces').values({ id: 'ws_a', name: 'ws_a', created_at: AT }).execute();
      const c = operatorCtx(db, 'ws_a');
      await addField(c, { objectType: 'contact', key: 'work', label: 'Work', valueType: 'EMAIL' });
      await addField(c, { objectType: 'contact', key: 'old', label: 'Old', valueType: 'EMAIL', archived: true });
      const defs = (await loadDefinitions(c, { objectType: 'contact' })) as TypeDefinitions;
      // Written as the API took them before: any text of one `@`, no white space, a dot after it.
      await writeRecord(db, defs, 'ws_a', {
        id: 'con_1',
        createdAt: AT,
        values: {
          $email: ['\u200eann@acme.test\u200f', 'ann@acme.test', 'bo\u00ad@b\u200bu\ufeffcher.example', 'cy@acme.test'],
          work: 'ann\u0007@acme.test',
          old: '\u2066dee@acme.test\u2069',
        },
      });
      await writeRecord(db, defs, 'ws_a', { id: 'con_2', createdAt: AT, values: { $email: ['ed@acme.test'], work: 'x@\u200b.test' } });
      await writeRecord(db, defs, 'ws_a', { id: 'con_3', createdAt: AT, values: { $email: ['fay\u200c@acme.test'] } });
      await write(db, (tx) => trashRecord({ ...operatorCtx(tx, 'ws_a'), db: tx }, RECORD_TYPES.contact, { id: 'con_3' }));
      takeMigrationNotes();
    });
    after(() => tdb.drop());

    test('addresses lose their invisible characters, with their index, in the trash too; what holds a control character is kept and counted', async () => {
      await migrate(tdb.db);
      const notes = takeMigrationNotes().filter((n) => n.migration === '0079_email_characters');
      const db = tdb.db.kysely as any;
      const fields = async (id: string) => {
        const row = await db.selectFrom('records').select(['fields', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(row.updated_at, AT, `${id}: updatedAt does not move`);
        return JSON.parse(row.fields);
      };
      assert.deepEqual(await fields('con_1'), {
        // The bidi marks' address is the second's: one value, in the first place.
        $email: ['ann@acme.test', 'bo@bucher.example', 'cy@acme.test'],
        work: 'ann\u0007@acme.test',
        old: 'dee@acme.test',
      });
      // Without its zero-width space it is no address: kept as it was.
      assert.deepEqual(await fields('con_2'), { $email: ['ed@acme.test'], work: 'x@\u200b.test' });
      for (const address of (await fields('con_1')).$email) assert.equal(checkValue('EMAIL', address), address, 'a write takes it as it is');
      assert.equal(notes.length, 1);
      // Changed: two of con_1's addresses and its archived one, the trashed contact's. Kept: both works.
      assert.deepEqual(notes[0]!.counts, { changed: 4, kept: 2, records: 1, trashed: 1 });

      // The index holds the new forms: meetings and e-mails find the contact by its address.
      assert.deepEqual((await contactIdsByEmails(db, 'ws_a', ['bo@bucher.example'])).get('bo@bucher.example'), ['con_1']);
      // The trashed contact comes back with its address without the joiner, indexed.
      await write(db, (tx) => restore({ ...operatorCtx(tx, 'ws_a'), db: tx }, { id: 'con_3' }));
      assert.deepEqual((await fields('con_3')).$email, ['fay@acme.test']);
      assert.deepEqual((await contactIdsByEmails(db, 'ws_a', ['FAY@acme.test'])).get('fay@acme.test'), ['con_3']);

      // Run again, it has nothing left to rewrite and nothing to say.
      assert.deepEqual(await migrate(tdb.db).then(() => takeMigrationNotes()), []);
    });
  });

  describe(`migration 0079_email_characters, over pages [${dialect}]`, () => {
    let tdb: TestDb;
    after(() => tdb?.drop());

    test('1,201 contacts, most of one createdAt, 520 of them in the trash: each read once over the pages', async () => {
      tdb = await createTestDb(dialect, { before: '0079' });
      const db = tdb.db.kysely as any;
      await db.insertInto('workspaces').values({ id: 'ws_p', name: 'ws_p', created_at: AT }).execute();
      const defs = (await loadDefinitions(operatorCtx(db, 'ws_p'), { objectType: 'contact' })) as TypeDefinitions;
      // An import gives every record it makes one createdAt: the pages' ties are broken by id.
      const later = '2026-03-02T10:00:00.000Z';
      await write(db, async (tx) => {
        for (let i = 0; i < 1201; i++) {
          const id = `con_p${String(i).padStart(4, '0')}`;
          await writeRecord(tx, defs, 'ws_p', { id, createdAt: i % 7 === 0 ? later : AT, values: { $email: [`p${i}\u200b@acme.test`] } });
        }
      });
      // 520 of them in the trash: over two pages of the trash.
      await write(db, async (tx) => {
        for (let i = 0; i < 520; i++)
          await trashRecord({ ...operatorCtx(tx, 'ws_p'), db: tx }, RECORD_TYPES.contact, { id: `con_p${String(i).padStart(4, '0')}` });
      });
      // One moment: the pages' ties are broken by id.
      await db.updateTable('trash').set({ deleted_at: later }).where('workspace_id', '=', 'ws_p').execute();
      takeMigrationNotes();
      await migrate(tdb.db);
      const notes = takeMigrationNotes().filter((n) => n.migration === '0079_email_characters');
      assert.deepEqual(notes[0]?.counts, { changed: 1201, kept: 0, records: 681, trashed: 520 });
      const rows = await db.selectFrom('records').select(['fields']).where('workspace_id', '=', 'ws_p').execute();
      assert.equal(rows.length, 681);
      const held = await db.selectFrom('trash').select(['payload']).where('workspace_id', '=', 'ws_p').execute();
      assert.equal(held.length, 520);
      assert.ok(held.every((r: { payload: string }) => !r.payload.includes('\\u200b') && !r.payload.includes('\u200b')));
      assert.ok(rows.every((r: { fields: string }) => !r.fields.includes('\\u200b') && !r.fields.includes('\u200b')));
    });
  });
}
