// Migration 0025_leaner_indexes (docs/filtering.md §Indexes): the text parts of the value index
// keep only rows with a text, and the relationship index by target alone is gone. From a database
// at 0024 holding text and numeric values and relationships: every row stays, the indexes have
// their new shape, and each kind of statement that read them is still answered from an index, with
// the same records, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { MIGRATIONS, migrate } from '../../src/db/migrate.ts';
import { type Atom, driverSql } from '../../src/records/filter/repository.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { indexPlan } from '../helpers/plans.ts';

const AT = isoNow(Date.UTC(2026, 0, 1));
const id = (k: number) => `con_${String(k).padStart(3, '0')}`;
const SCOPE = { workspaceId: 'ws_n', objectType: 'contact' };

for (const dialect of testDialects()) {
  describe(`migration 0025_leaner_indexes [${dialect}]`, () => {
    let tdb: TestDb;
    const rows = async () => ({
      values: (await sql`select record_id, field, value_text, value_num from record_values order by record_id, field`.execute(tdb.db.kysely)).rows,
      links: (await sql`select source_id, name, target_id from entity_relationships order by source_id`.execute(tdb.db.kysely)).rows,
    });
    let before0025: unknown;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0025' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_n', 'n', ${AT})`.execute(db);
      const values = Array.from({ length: 40 }, (_, k) => [
        sql`('ws_n', 'contact', 'score', null, ${k}, ${id(k)})`,
        sql`('ws_n', 'contact', 'title', ${`t${k}`}, null, ${id(k)})`,
      ]).flat();
      await sql`insert into record_values (workspace_id, object_type, field, value_text, value_num, record_id) values ${sql.join(values)}`.execute(db);
      const links = Array.from({ length: 40 }, (_, k) => sql`(${id(k)}, '$account', 'account', ${`acc_${k % 4}`}, 0)`);
      await sql`insert into entity_relationships (source_id, name, object_type, target_id, position) values ${sql.join(links)}`.execute(db);
      before0025 = await rows();
      // Through this migration only: 0066 replaces the PostgreSQL prefix index (migration-0066.test.ts).
      await migrate(tdb.db, Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name <= '0025_leaner_indexes')));
    });
    after(() => tdb.drop());

    const indexDef = async (name: string) =>
      dialect === 'sqlite'
        ? (await sql<{ d: string }>`select sql as d from sqlite_master where name = ${name}`.execute(tdb.db.kysely)).rows[0]?.d
        : (await sql<{ d: string }>`select indexdef as d from pg_indexes where schemaname = current_schema() and indexname = ${name}`.execute(tdb.db.kysely))
            .rows[0]?.d;

    test('every row is kept; the text indexes hold only rows with a text; the index by target alone is gone', async () => {
      assert.deepEqual(await rows(), before0025);
      assert.match(String(await indexDef('record_values_text')), /where\s+\(*"?value_text"?\s+is\s+not\s+null/i);
      if (dialect === 'postgres') assert.match(String(await indexDef('record_values_prefix')), /where\s+\(*"?value_text"?\s+is\s+not\s+null/i);
      assert.equal(await indexDef('entity_relationships_target'), undefined);
    });

    // On PostgreSQL either text index answers `=` and LIKE; both are partial now.
    const TEXT = dialect === 'sqlite' ? /record_values_text/ : /record_values_(text|prefix)/;
    const atoms: Array<{ name: string; atom: Atom; found: string[]; index: RegExp }> = [
      { name: 'equal', atom: { kind: 'values', field: 'title', cond: { op: 'equal', text: 't7' }, multiRow: false }, found: [id(7)], index: TEXT },
      {
        name: 'startsWith',
        atom: { kind: 'values', field: 'title', cond: { op: 'startsWith', text: 't3' }, multiRow: false },
        found: [id(3), ...Array.from({ length: 10 }, (_, k) => id(30 + k))],
        // Today's statement names no collation (migration 0066 gives the column its own), so at
        // 0025 either text index of PostgreSQL may answer it.
        index: TEXT,
      },
      {
        name: 'contains without a trigram',
        atom: { kind: 'values', field: 'title', cond: { op: 'contains', text: '9' }, multiRow: false },
        found: [id(9), id(19), id(29), id(39)],
        index: TEXT,
      },
      {
        name: 'a relationship by target',
        atom: { kind: 'own', name: '$account', id: 'acc_1' },
        found: [1, 5, 9, 13, 17, 21, 25, 29, 33, 37].map(id),
        index: /entity_relationships_inverse/,
      },
    ];
    for (const { name, atom, found, index } of atoms) {
      test(`${name}: the same records, read through an index`, async () => {
        const db = tdb.db.kysely;
        const compiled = driverSql(db, SCOPE, atom).compile(db);
        const got = (await db.executeQuery<{ record_id: string }>(compiled)).rows.map((r) => r.record_id).sort();
        assert.deepEqual(got, found);
        const p = await indexPlan(db, dialect, compiled);
        assert.match(p, index, p);
      });
    }

    test('a long `in` list of texts (e-mails to contacts) reads the text index', async () => {
      const db = tdb.db.kysely;
      // More than PostgreSQL expands into ORs (100) when it proves a partial index usable.
      const wanted = Array.from({ length: 150 }, (_, k) => `t${k}`);
      const compiled = db
        .selectFrom('record_values')
        .select('record_id')
        .where('workspace_id', '=', 'ws_n')
        .where('object_type', '=', 'contact')
        .where('field', '=', 'title')
        .where('value_text', 'in', wanted)
        .compile();
      const got = (await db.executeQuery<{ record_id: string }>(compiled)).rows.map((r) => r.record_id).sort();
      assert.equal(got.length, 40);
      const p = await indexPlan(db, dialect, compiled);
      assert.match(p, TEXT, p);
    });
  });
}
