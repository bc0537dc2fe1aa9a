// Migration 0071_final_sigma (src/lib/fold.ts, docs/records.md §Value index) on both databases:
// from a database at 0070 whose value index and meeting participants hold text folded by lower
// case alone (a final sigma kept as ς), every indexed text holding ς is folded again, its trigram
// postings with it, so that prefix, equality and contains filters of Greek capitals find what a
// write made now would be found by; other rows do not change, a task's ranked status stays, and a
// meeting lists an address that now folds like another one once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { takeMigrationNotes } from '../../src/db/migration-notes.ts';
import { addField, loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { filteredPage, parseFilters } from '../../src/records/filter/service.ts';
import { fieldHash, trigramKey, trigrams } from '../../src/records/index/trigrams.ts';
import { writeRecord } from '../helpers/filters-fixtures.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-03-01T10:00:00.000Z';
const WS = 'ws_g';
/** The fold before 0071: lower case alone keeps Σ at the end of a word as ς. */
const oldFold = (s: string) => s.normalize('NFKC').toLowerCase();

for (const dialect of testDialects()) {
  describe(`migration 0071_final_sigma [${dialect}]`, () => {
    let tdb: TestDb;
    const db = () => tdb.db.kysely as any;
    const valueRows = async () =>
      (await sql`select record_id, field, value_text, value_num from record_values order by record_id, field, value_text`.execute(db())).rows;
    let untouched: unknown;

    /** Writes a record, then gives its value index the texts and postings the earlier fold gave. */
    async function writeOld(type: string, id: string, values: Record<string, unknown>, contains: string[] = []) {
      const defs = (await loadDefinitions(operatorCtx(db(), WS), { objectType: type })) as TypeDefinitions;
      await writeRecord(db(), defs, WS, { id, createdAt: AT, values });
      for (const [field, v] of Object.entries(values)) {
        if (typeof v !== 'string') continue;
        await db()
          .updateTable('record_values')
          .set({ value_text: oldFold(v) })
          .where('record_id', '=', id)
          .where('field', '=', field)
          .execute();
        if (!contains.includes(field)) continue;
        await db().deleteFrom('record_trigrams').where('record_id', '=', id).execute();
        const base = fieldHash(WS, type, field);
        await db()
          .insertInto('record_trigrams')
          .values(trigrams(oldFold(v)).map((t) => ({ key: trigramKey(base, t), record_id: id })))
          .execute();
      }
    }

    before(async () => {
      tdb = await createTestDb(dialect, { before: '0071' });
      await db().insertInto('workspaces').values({ id: WS, name: WS, created_at: AT }).execute();
      await addField(operatorCtx(db(), WS), { objectType: 'contact', key: 'mail', label: 'Mail', valueType: 'EMAIL' });
      await writeOld('account', 'acc_1', { $name: 'ΑΣΤΕΡΙΑΣ' });
      await writeOld('account', 'acc_2', { $name: 'Acme' });
      await writeOld('contact', 'con_1', { mail: 'ΑΝΝΑΣ@x.test' }, ['mail']);
      await writeOld('task', 'tsk_1', { $title: 'ΣΚΟΠΟΣ', $status: 'TODO' });
      await sql`insert into meetings (id, workspace_id, title, start_date, end_date, created_at, updated_at)
        values ('mtg_1', ${WS}, 'Kick-off', '2026-02-01T10:00:00.000Z', '2026-02-01T11:00:00.000Z', ${AT}, ${AT})`.execute(db());
      // Two spellings that fold to one address now, and one that only changes.
      await sql`insert into meeting_participants (meeting_id, workspace_id, email)
        values ('mtg_1', ${WS}, 'αννας@x.test'), ('mtg_1', ${WS}, 'αννασ@x.test'), ('mtg_1', ${WS}, 'κωςτας@y.test')`.execute(db());
      untouched = (await valueRows()).filter((r: any) => r.record_id === 'acc_2');
      takeMigrationNotes();
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('texts holding ς are folded with σ; other rows stay; the migration counts them', async () => {
      const rows = await valueRows();
      assert.ok(!rows.some((r: any) => typeof r.value_text === 'string' && r.value_text.includes('ς')));
      assert.deepEqual(
        rows.filter((r: any) => r.record_id !== 'acc_2' && r.value_text !== null && r.value_text !== 'todo').map((r: any) => r.value_text),
        ['αστεριασ', 'αννασ@x.test', 'σκοποσ'],
      );
      assert.deepEqual(
        rows.filter((r: any) => r.record_id === 'acc_2'),
        untouched,
      );
      const participants = await sql`select email from meeting_participants order by email`.execute(db());
      assert.deepEqual(
        participants.rows.map((r: any) => r.email),
        ['αννασ@x.test', 'κωστασ@y.test'],
      );
      const notes = takeMigrationNotes().filter((n) => n.migration === '0071_final_sigma');
      assert.deepEqual(notes[0]?.counts, { records: 3, participants: 1, merged: 1 });
    });

    test('filters of Greek capitals find the records, through every index', async () => {
      const c = operatorCtx(db(), WS);
      const ids = async (type: string, query: Record<string, string>) => {
        const defs = (await loadDefinitions(c, { objectType: type }))!;
        const page = await filteredPage(c, { defs, filters: parseFilters(query, defs), page: { limit: 25, offset: 0 } });
        assert.equal(page.totalCount, page.ids.length);
        return page.ids;
      };
      assert.deepEqual(await ids('account', { '$name[startsWith]': 'ΑΣ' }), ['acc_1']);
      assert.deepEqual(await ids('account', { $name: 'αστεριας' }), ['acc_1']);
      assert.deepEqual(await ids('contact', { 'mail[contains]': 'ΝΑΣ@' }), ['con_1']);
      assert.deepEqual(await ids('contact', { 'mail[contains]': 'νας@x' }), ['con_1']);
      assert.deepEqual(await ids('task', { '$title[startsWith]': 'ΣΚΟΠΟΣ' }), ['tsk_1']);
      assert.deepEqual(await ids('task', { $status: 'TODO' }), ['tsk_1']);
      // The earlier postings of the changed text are gone: none is left but those the text gives.
      const postings = await db().selectFrom('record_trigrams').select('key').where('record_id', '=', 'con_1').execute();
      const base = fieldHash(WS, 'contact', 'mail');
      assert.deepEqual(
        postings.map((p: { key: unknown }) => Number(p.key)).sort(),
        trigrams('αννασ@x.test')
          .map((t) => trigramKey(base, t))
          .sort(),
      );
    });
  });
}
