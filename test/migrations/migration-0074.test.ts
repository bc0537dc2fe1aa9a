// Migration 0074_url_forms on a database holding URL and SOCIAL_HANDLE values stored before their
// present rules, on both databases (docs/records.md §Values stored before 0074): each value a rule
// takes becomes what a write stores now, with its value index, in live records and in the trash's;
// a value no rule takes stays exactly as it was; the migration reports both counts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { write } from '../../src/db/write.ts';
import { addField, loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { filteredPage, parseFilters } from '../../src/records/filter/service.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { checkValue } from '../../src/records/values.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { trashRecord } from '../../src/trash/service.ts';
import { restore } from '../../src/trash/restore.ts';
import { writeRecord } from '../helpers/filters-fixtures.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-03-01T10:00:00.000Z';

for (const dialect of testDialects()) {
  describe(`migration 0074_url_forms [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0074' });
      const db = tdb.db.kysely as any;
      await db.insertInto('workspaces').values({ id: 'ws_a', name: 'ws_a', created_at: AT }).execute();
      const c = operatorCtx(db, 'ws_a');
      await addField(c, { objectType: 'contact', key: 'site', label: 'Site', valueType: 'URL' });
      await addField(c, { objectType: 'contact', key: 'old', label: 'Old', valueType: 'URL', archived: true });
      const writeAs = async (type: string, id: string, values: Record<string, unknown>) => {
        const defs = (await loadDefinitions(c, { objectType: type })) as TypeDefinitions;
        await writeRecord(db, defs, 'ws_a', { id, createdAt: AT, values });
      };
      // Written as the API took them before: any URL the parser read, handles not percent-encoded.
      await writeAs('account', 'acc_1', {
        $name: 'Acme',
        $website: ['https://acme.test/a b', ' https://acme.test/x ', 'https:acme.test', 'https://acme.test/a%20b', 'https://ac\nme.test/y'],
        $linkedIn: 'https://linkedin.com/in/jürgen',
      });
      await writeAs('contact', 'con_1', { $profilePhotoUrl: 'https://img.test/a\\b', site: 'not a url', old: 'https://old.test/\tx' });
      await writeAs('account', 'acc_2', { $name: 'Gone', $website: ['https://gone.test/a b'] });
      await write(db, (tx) => trashRecord({ ...operatorCtx(tx, 'ws_a'), db: tx }, RECORD_TYPES.account, { id: 'acc_2' }));
      takeMigrationNotes();
    });
    after(() => tdb.drop());

    test('values take their present forms with their index, in the trash too; what no rule takes is kept and counted', async () => {
      await migrate(tdb.db);
      const notes = takeMigrationNotes().filter((n) => n.migration === '0074_url_forms');
      const db = tdb.db.kysely as any;
      const fields = async (id: string) => {
        const row = await db.selectFrom('records').select(['fields', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(row.updated_at, AT, `${id}: updatedAt does not move`);
        return JSON.parse(row.fields);
      };
      assert.deepEqual(await fields('acc_1'), {
        $name: 'Acme',
        // Inner spaces percent-encoded (two spellings of one URL are one value), spaces around left
        // out, `https:` without `//` and a line break in the host as the URL parser read them.
        $website: ['https://acme.test/a%20b', 'https://acme.test/x', 'https://acme.test/', 'https://acme.test/y'],
        $linkedIn: 'https://linkedin.com/in/j%C3%BCrgen',
      });
      assert.deepEqual(await fields('con_1'), { $profilePhotoUrl: 'https://img.test/a%5Cb', site: 'not a url', old: 'https://old.test/%09x' });
      for (const url of (await fields('acc_1')).$website) assert.equal(checkValue('URL', url), url, 'a write takes it as it is');
      assert.equal(notes.length, 1);
      // Changed: four of acc_1's websites and its handle, con_1's photo and archived URL, the trashed
      // account's website. Kept: con_1's site.
      assert.deepEqual(notes[0]!.counts, { changed: 8, kept: 1, records: 2, trashed: 1 });

      // The index holds the new forms: filters find them as a write's would be found.
      const c = operatorCtx(db, 'ws_a');
      const acc = (await loadDefinitions(c, { objectType: 'account' }))!;
      const ids = async (query: Record<string, string>) =>
        (await filteredPage(c, { defs: acc, filters: parseFilters(query, acc), page: { limit: 25, offset: 0 } })).ids.sort();
      assert.deepEqual(await ids({ $linkedIn: '@jürgen' }), ['acc_1']);
      assert.deepEqual(await ids({ $website: 'https://acme.test/a%20b' }), ['acc_1']);
      // The trashed record comes back with its value in its form, indexed.
      await write(db, (tx) => restore({ ...operatorCtx(tx, 'ws_a'), db: tx }, { id: 'acc_2' }));
      assert.deepEqual((await fields('acc_2')).$website, ['https://gone.test/a%20b']);
      assert.deepEqual(await ids({ $website: 'https://gone.test/a%20b' }), ['acc_2']);
    });
  });
}
