// Migration 0066_value_text_code_points (docs/filtering.md §Indexes): on PostgreSQL the value
// index's text and the meetings' participant addresses take the collation "C", and the second text
// index in that collation is gone. From a database at 0065 holding text values, a meeting and its
// participants: every row stays, each text condition of a filter finds the same records through
// the one text index, a range follows code point order, and a contact's meetings (a join of the two
// columns) still read.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { meetingsOfContacts } from '../../src/meetings/repository.ts';
import { type Atom, driverSql } from '../../src/records/filter/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { indexPlan } from '../helpers/plans.ts';

const AT = '2026-01-01T00:00:00.000Z';
const SCOPE = { workspaceId: 'ws_n', objectType: 'contact' };
// Code point order puts 'Z' (U+005A) before 'a' (U+0061) and 'é' (U+00E9) after 'z'.
const TITLES: Record<string, string> = { con_1: 'Zeta', con_2: 'alpha', con_3: 'azur', con_4: 'ébène', con_5: 'zèbre' };

for (const dialect of testDialects()) {
  describe(`migration 0066_value_text_code_points [${dialect}]`, () => {
    let tdb: TestDb;
    const rows = async () => ({
      values: (await sql`select record_id, field, value_text, value_num from record_values order by record_id, field`.execute(tdb.db.kysely)).rows,
      participants: (await sql`select meeting_id, workspace_id, email from meeting_participants order by meeting_id, email`.execute(tdb.db.kysely)).rows,
    });
    let before0066: unknown;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0066' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_n', 'n', ${AT})`.execute(db);
      const values = Object.entries(TITLES).flatMap(([id, title]) => [
        sql`('ws_n', 'contact', 'title', ${title}, null, ${id})`,
        sql`('ws_n', 'contact', '$email', ${`${id}@example.com`}, null, ${id})`,
        sql`('ws_n', 'contact', 'score', null, ${Number(id.slice(4))}, ${id})`,
      ]);
      await sql`insert into record_values (workspace_id, object_type, field, value_text, value_num, record_id) values ${sql.join(values)}`.execute(db);
      await sql`insert into meetings (id, workspace_id, title, start_date, end_date, created_at, updated_at)
        values ('mtg_1', 'ws_n', 'Kick-off', '2026-02-01T10:00:00.000Z', '2026-02-01T11:00:00.000Z', ${AT}, ${AT})`.execute(db);
      await sql`insert into meeting_participants (meeting_id, workspace_id, email)
        values ('mtg_1', 'ws_n', 'con_2@example.com'), ('mtg_1', 'ws_n', 'someone@else.org')`.execute(db);
      before0066 = await rows();
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('every row is kept; on PostgreSQL both columns are in "C" and one text index is left', async () => {
      assert.deepEqual(await rows(), before0066);
      if (dialect !== 'postgres') return;
      const collations = await sql<{ table_name: string; collation_name: string | null }>`select table_name, collation_name
        from information_schema.columns where table_schema = current_schema()
        and ((table_name = 'record_values' and column_name = 'value_text') or (table_name = 'meeting_participants' and column_name = 'email'))
        order by table_name`.execute(tdb.db.kysely);
      assert.deepEqual(
        collations.rows.map((r) => [r.table_name, r.collation_name]),
        [
          ['meeting_participants', 'C'],
          ['record_values', 'C'],
        ],
      );
      const indexes = await sql<{ indexname: string }>`select indexname from pg_indexes
        where schemaname = current_schema() and tablename = 'record_values' order by indexname`.execute(tdb.db.kysely);
      assert.deepEqual(
        indexes.rows.map((r) => r.indexname),
        ['record_values_num', 'record_values_record', 'record_values_text'],
      );
    });

    const title = (cond: Extract<Atom, { kind: 'values' }>['cond']): Atom => ({ kind: 'values', field: 'title', cond, multiRow: false });
    const atoms: Array<{ name: string; atom: Atom; found: string[] }> = [
      { name: 'equal', atom: title({ op: 'equal', text: 'azur' }), found: ['con_3'] },
      // In code point order 'Zeta' sorts before every lowercase letter, and 'ébène' after 'z'.
      { name: 'startsWith a', atom: title({ op: 'startsWith', text: 'a' }), found: ['con_2', 'con_3'] },
      { name: 'startsWith z', atom: title({ op: 'startsWith', text: 'z' }), found: ['con_5'] },
      { name: 'startsWith é', atom: title({ op: 'startsWith', text: 'é' }), found: ['con_4'] },
      { name: 'set', atom: title({ op: 'set' }), found: Object.keys(TITLES) },
      { name: 'contains without a trigram', atom: title({ op: 'contains', text: 'è' }), found: ['con_4', 'con_5'] },
    ];
    for (const { name, atom, found } of atoms) {
      test(`${name}: the same records, read through the text index`, async () => {
        const db = tdb.db.kysely;
        const compiled = driverSql(db, SCOPE, atom).compile(db);
        const got = (await db.executeQuery<{ record_id: string }>(compiled)).rows.map((r) => r.record_id).sort();
        assert.deepEqual(got, found);
        const p = await indexPlan(db, dialect, compiled);
        assert.match(p, /record_values_text/, p);
      });
    }

    test("a contact's meetings join its addresses to the participants'", async () => {
      const got = await meetingsOfContacts(tdb.db.kysely, 'ws_n', ['con_1', 'con_2']);
      assert.deepEqual(
        got.map((m) => [m.contactId, m.meetingId]),
        [['con_2', 'mtg_1']],
      );
      if (dialect === 'postgres') {
        // The join looks the participants up by address through their index, which needs the
        // comparison in the index's collation.
        const join = sql`select p.meeting_id from record_values v
          join meeting_participants p on p.workspace_id = v.workspace_id and p.email = v.value_text
          where v.record_id = 'con_2' and v.field = '$email'`.compile(tdb.db.kysely);
        const p = await indexPlan(tdb.db.kysely, dialect, join);
        assert.match(p, /Index (Only )?Scan using meeting_participants_email[^\n]*\n\s*Index Cond: [^\n]*email = v\.value_text/, p);
      }
      const one = await meetingsOfContacts(tdb.db.kysely, 'ws_n', ['con_2']);
      assert.deepEqual(
        one.map((m) => [m.contactId, m.meetingId, m.startDate]),
        [['con_2', 'mtg_1', '2026-02-01T10:00:00.000Z']],
      );
    });
  });
}
