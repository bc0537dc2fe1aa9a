// Migration 0056_value_forms on a database holding TELEPHONE and SOCIAL_HANDLE values written
// before their forms, on both databases (docs/records.md §Values stored before 0056): each value
// becomes what a write stores now (E.164, the profile URL), with its value and trigram indexes; a
// value that cannot be normalised stays exactly as it was; the migration reports both counts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { addField, loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { filteredPage, parseFilters } from '../../src/records/filter/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { writeRecord } from '../helpers/filters-fixtures.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-03-01T10:00:00.000Z';

for (const dialect of testDialects()) {
  describe(`migration 0056_value_forms [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0056' });
      const db = tdb.db.kysely as any;
      for (const [id, country] of [
        ['ws_a', null],
        ['ws_b', 'US'],
      ])
        await db.insertInto('workspaces').values({ id, name: id, created_at: AT, default_country: country }).execute();
      for (const ws of ['ws_a', 'ws_b']) {
        const c = operatorCtx(db, ws);
        await addField(c, { objectType: 'contact', key: 'phones', label: 'Phones', valueType: 'TELEPHONE', multipleValues: true });
        await addField(c, { objectType: 'contact', key: 'office', label: 'Office', valueType: 'TELEPHONE', defaultCountry: 'DE' });
        await addField(c, { objectType: 'contact', key: 'profile', label: 'Profile', valueType: 'SOCIAL_HANDLE', handleService: 'INSTAGRAM' });
        await addField(c, { objectType: 'contact', key: 'alias', label: 'Alias', valueType: 'SOCIAL_HANDLE' });
      }
      const write = async (ws: string, type: string, id: string, values: Record<string, unknown>) => {
        const defs = (await loadDefinitions(operatorCtx(db, ws), { objectType: type })) as TypeDefinitions;
        await writeRecord(db, defs, ws, { id, createdAt: AT, values });
      };
      // Written as the API took them before 0056: any handle, numbers with separators.
      await write('ws_a', 'account', 'acc_1', { $name: 'Acme', $linkedIn: '@acme-inc', $twitter: 'https://twitter.com/acme', $facebook: 'not a handle!' });
      await write('ws_a', 'contact', 'con_1', {
        phones: ['+49 30 1234567', '+49301234567', '(202) 555-0123', '+1 555 0100'],
        office: '030 7654321',
        profile: 'instagram.com/ann.lee',
        alias: '@ann',
      });
      await write('ws_b', 'contact', 'con_b1', { phones: ['(202) 555-0123'], office: 'ask reception' });
      await write('ws_a', 'contact', 'con_2', { phones: ['+4930 1234567'] });
      takeMigrationNotes();
    });
    after(() => tdb.drop());

    test('values take their forms with their indexes; what cannot be normalised is kept and counted', async () => {
      await migrate(tdb.db);
      const notes = takeMigrationNotes().filter((n) => n.migration === '0056_value_forms');
      const db = tdb.db.kysely as any;
      const fields = async (id: string) => {
        const row = await db.selectFrom('records').select(['fields', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(row.updated_at, AT, `${id}: updatedAt does not move`);
        return JSON.parse(row.fields);
      };
      assert.deepEqual(await fields('acc_1'), {
        $name: 'Acme',
        $linkedIn: 'https://linkedin.com/in/acme-inc',
        $twitter: 'https://x.com/acme',
        $facebook: 'not a handle!',
      });
      assert.deepEqual(await fields('con_1'), {
        // Two spellings of one number are one value; a national number without a country and an
        // invalid one stay as they were.
        phones: ['+49301234567', '(202) 555-0123', '+1 555 0100'],
        office: '+49307654321',
        profile: 'https://www.instagram.com/ann.lee',
        alias: '@ann',
      });
      // ws_b's default country places the national number; a text stays.
      assert.deepEqual(await fields('con_b1'), { phones: ['+12025550123'], office: 'ask reception' });
      assert.deepEqual(await fields('con_2'), { phones: ['+49301234567'] });
      assert.equal(notes.length, 1);
      // Changed: $linkedIn, $twitter, con_1's first phone, office and profile, con_b1's phone, con_2's
      // phone (con_1's second phone was already E.164). Kept: $facebook, two of con_1's phones,
      // con_b1's office.
      assert.deepEqual(notes[0]!.counts, { changed: 7, kept: 4, records: 4 });
      assert.match(notes[0]!.message, /normalised 7 .* kept 4/);

      // The indexes hold the new forms: filters find them as a write's would be found.
      const c = operatorCtx(db, 'ws_a');
      const con = (await loadDefinitions(c, { objectType: 'contact' }))!;
      const acc = (await loadDefinitions(c, { objectType: 'account' }))!;
      const ids = async (defs: TypeDefinitions, query: Record<string, string>) =>
        (await filteredPage(c, { defs, filters: parseFilters(query, defs), page: { limit: 25, offset: 0 } })).ids.sort();
      assert.deepEqual(await ids(con, { 'phones[contains]': '+49301234567' }), ['con_1', 'con_2']);
      assert.deepEqual(await ids(con, { 'phones[contains]': '4930 123' }), ['con_1', 'con_2']);
      // A value kept as it was is found as written.
      assert.deepEqual(await ids(acc, { $facebook: 'NOT A HANDLE!' }), ['acc_1']);
      assert.deepEqual(await ids(con, { office: '030 7654321' }), ['con_1']);
      assert.deepEqual(await ids(con, { profile: '@ann.lee' }), ['con_1']);
      assert.deepEqual(await ids(acc, { $twitter: '@acme' }), ['acc_1']);
      assert.deepEqual(await ids(acc, { '$linkedIn[startsWith]': 'https://linkedin.com/in/acme' }), ['acc_1']);
    });
  });
}
