// Migration 0078_email_keys (docs/records.md §Values stored before 0078) on both databases: from a
// database at 0077 whose value index holds e-mail addresses folded as written (no key, no Unicode
// spelling), the records holding an address of an internationalized domain have their value index
// written again, trigram postings with it, so that a unique check refuses the other form, a
// `contains` in either spelling finds both, and a meeting's ASCII address finds the contact; other
// records' rows do not change; two records that now hold one address of a unique field both keep
// it, the migration counts them and fails on nothing; and it lists itself as one that older
// releases run beside.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { addField, loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { foldText } from '../../src/lib/fold.ts';
import { filteredPage, parseFilters } from '../../src/records/filter/service.ts';
import { contactIdsByEmails, valueTaken } from '../../src/records/index/repository.ts';
import { fieldHash, trigramKey, trigrams } from '../../src/records/index/trigrams.ts';
import { writeRecord } from '../helpers/filters-fixtures.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-03-01T10:00:00.000Z';
const WS = 'ws_e';

for (const dialect of testDialects()) {
  describe(`migration 0078_email_keys [${dialect}]`, () => {
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

    /** Writes a contact, then gives its EMAIL fields the one folded row each and the postings the earlier index gave. */
    async function writeOld(id: string, values: Record<string, unknown>) {
      const defs = (await loadDefinitions(operatorCtx(db(), WS), { objectType: 'contact' })) as TypeDefinitions;
      await writeRecord(db(), defs, WS, { id, createdAt: AT, values });
      await db().deleteFrom('record_trigrams').where('record_id', '=', id).execute();
      for (const [field, v] of Object.entries(values)) {
        await db().deleteFrom('record_values').where('record_id', '=', id).where('field', '=', field).execute();
        const texts = (Array.isArray(v) ? v : [v]).map((x: string) => foldText(x));
        await db()
          .insertInto('record_values')
          .values(texts.map((value_text) => ({ workspace_id: WS, object_type: 'contact', field, value_text, value_num: null, record_id: id })))
          .execute();
        const base = fieldHash(WS, 'contact', field);
        const keys = [...new Set(texts.flatMap((t) => trigrams(t).map((g) => trigramKey(base, g))))];
        await db()
          .insertInto('record_trigrams')
          .values(keys.map((key) => ({ key, record_id: id })))
          .execute();
      }
    }

    before(async () => {
      tdb = await createTestDb(dialect, { before: '0078' });
      await db().insertInto('workspaces').values({ id: WS, name: WS, created_at: AT }).execute();
      const c = operatorCtx(db(), WS);
      await addField(c, { objectType: 'contact', key: 'work', label: 'Work', valueType: 'EMAIL', unique: true });
      await writeOld('con_1', { $email: ['Ann@Bücher.example', 'ann@acme.test'] });
      await writeOld('con_2', { work: 'bo@bücher.example' });
      // The other form of con_2's unique address, taken while the index told them apart.
      await writeOld('con_3', { work: 'BO@xn--bcher-kva.example' });
      await writeOld('con_4', { $email: ['cy@acme.test'] });
      untouched = await rowsOf('con_4');
      takeMigrationNotes();
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('addresses of internationalized domains take their key and Unicode spelling; others stay; clashes are kept and counted', async () => {
      assert.deepEqual(await rowsOf('con_1'), [
        { field: '$email', value_text: 'ann@acme.test' },
        { field: '$email', value_text: 'ann@bücher.example' },
        { field: '$email', value_text: 'ann@xn--bcher-kva.example' },
      ]);
      for (const id of ['con_2', 'con_3'])
        assert.deepEqual(await rowsOf(id), [
          { field: 'work', value_text: 'bo@bücher.example' },
          { field: 'work', value_text: 'bo@xn--bcher-kva.example' },
        ]);
      assert.deepEqual(await rowsOf('con_4'), untouched);
      const fields = await db().selectFrom('records').select(['id', 'fields', 'updated_at']).where('id', '=', 'con_3').executeTakeFirstOrThrow();
      assert.deepEqual([JSON.parse(fields.fields), fields.updated_at], [{ work: 'BO@xn--bcher-kva.example' }, AT]);
      const notes = takeMigrationNotes().filter((n) => n.migration === '0078_email_keys');
      assert.deepEqual(notes[0]?.counts, { records: 3, clashes: 2 });
      const listed = await sql<{ name: string }>`select name from migrations_run_beside order by name`.execute(db());
      assert.ok(listed.rows.some((r) => r.name === '0078_email_keys'));
    });

    test('the unique check, contains in either spelling and a meeting address find the migrated rows', async () => {
      const c = operatorCtx(db(), WS);
      assert.equal(await valueTaken(db(), WS, 'contact', 'work', { text: 'bo@xn--bcher-kva.example' }, 'con_new'), true);
      const ids = async (query: Record<string, string>) => {
        const defs = (await loadDefinitions(c, { objectType: 'contact' }))!;
        const page = await filteredPage(c, { defs, filters: parseFilters(query, defs), page: { limit: 25, offset: 0 } });
        assert.equal(page.totalCount, page.ids.length);
        return [...page.ids].sort();
      };
      assert.deepEqual(await ids({ '$email[contains]': 'xn--bcher' }), ['con_1']);
      assert.deepEqual(await ids({ '$email[contains]': 'ann@bücher' }), ['con_1']);
      assert.deepEqual(await ids({ 'work[contains]': 'bo@bücher.example' }), ['con_2', 'con_3']);
      assert.deepEqual(await ids({ 'work[contains]': 'bo@xn--bcher-kva' }), ['con_2', 'con_3']);
      assert.deepEqual([...(await contactIdsByEmails(db(), WS, ['ann@xn--bcher-kva.example'])).values()], [['con_1']]);
    });
  });
}
