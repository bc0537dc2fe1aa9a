// Migration 0023_partial_num_index: the numeric part of the value index keeps only rows with a
// number (docs/filtering.md §Indexes). From a database at 0022 holding text and numeric values:
// every value stays, the index holds only the numeric rows, and a numeric filter's statement is
// still answered from it on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { driverSql } from '../../src/records/filter/repository.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { indexPlan } from '../helpers/plans.ts';

const AT = isoNow(Date.UTC(2026, 0, 1));

for (const dialect of testDialects()) {
  describe(`migration 0023_partial_num_index [${dialect}]`, () => {
    let tdb: TestDb;
    const values = async () =>
      (await sql`select record_id, field, value_text, value_num from record_values order by record_id, field`.execute(tdb.db.kysely)).rows;
    let before0023: unknown[];
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0023' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_n', 'n', ${AT})`.execute(db);
      const rows = Array.from({ length: 40 }, (_, k) => [
        sql`('ws_n', 'contact', 'score', null, ${k}, ${`con_${String(k).padStart(3, '0')}`})`,
        sql`('ws_n', 'contact', 'title', ${`t${k}`}, null, ${`con_${String(k).padStart(3, '0')}`})`,
      ]).flat();
      await sql`insert into record_values (workspace_id, object_type, field, value_text, value_num, record_id) values ${sql.join(rows)}`.execute(db);
      before0023 = await values();
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('every value is kept; the index holds only rows with a number', async () => {
      const db = tdb.db.kysely;
      assert.deepEqual(await values(), before0023);
      const def =
        dialect === 'sqlite'
          ? (await sql<{ d: string }>`select sql as d from sqlite_master where name = 'record_values_num'`.execute(db)).rows[0]?.d
          : (await sql<{ d: string }>`select indexdef as d from pg_indexes where schemaname = current_schema() and indexname = 'record_values_num'`.execute(db))
              .rows[0]?.d;
      assert.match(String(def), /where\s+\(*"?value_num"?\s+is\s+not\s+null/i);
    });

    test("a numeric filter's statement reads the index and finds the same records", async () => {
      const db = tdb.db.kysely;
      const query = driverSql(
        db,
        { workspaceId: 'ws_n', objectType: 'contact' },
        { kind: 'values', field: 'score', cond: { op: 'num', gt: 36 }, multiRow: false },
      );
      const compiled = query.compile(db);
      const found = (await db.executeQuery<{ record_id: string }>(compiled)).rows.map((r) => r.record_id).sort();
      assert.deepEqual(found, ['con_037', 'con_038', 'con_039']);
      // 80 rows: PostgreSQL would rather scan the table; told not to, it still may only take an index it can prove usable.
      const plan = await indexPlan(db, dialect, compiled);
      assert.match(plan, /record_values_num/, plan);
    });
  });
}
