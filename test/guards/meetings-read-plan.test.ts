// The meetings of many contacts (meetingsOfContacts, src/meetings/repository.ts) are found through
// the contacts' own `$email` rows of the value index, by record id, whatever the statistics say
// (docs/design.md §Database statistics). Here the statistics were taken before a second workspace
// wrote its contacts (as during and just after a large import): they take that workspace for an
// empty one, and a plan built on them read the workspace's whole `$email` range through the value
// index for the 25 contacts asked for (3,000 entries; 1.4 s on PostgreSQL right after an import of
// 300,000 contacts committed). Checked on the statement sent: on PostgreSQL by EXPLAIN ANALYZE of
// its plan for the values sent (the rows every node handled stay near the contacts'), on SQLite by
// its query plan (the record index).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { meetingsOfContacts } from '../../src/meetings/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { type PlanNode, sqlitePlan, work } from '../helpers/plans.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

const emails = (ws: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    workspace_id: ws,
    object_type: 'contact',
    field: '$email',
    record_id: `con_${ws}_${String(from + i).padStart(6, '0')}`,
    value_text: `p${from + i}@${ws}.test`,
    value_num: null,
  }));

for (const dialect of testDialects()) {
  describe(`the meetings of a page of contacts are found by record id [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      for (let i = 0; i < 2000; i += 500)
        await db
          .insertInto('record_values')
          .values(emails('wsa', i, 500))
          .execute();
      await sql`analyze`.execute(db);
      // Written after the statistics were taken: the workspace they do not know.
      for (let i = 0; i < 3000; i += 500)
        await db
          .insertInto('record_values')
          .values(emails('wsb', i, 500))
          .execute();
    });
    after(() => tdb.drop());

    test('25 contacts of a workspace the statistics do not know', async () => {
      const db = tdb.db.kysely;
      const ids = emails('wsb', 1000, 25).map((r) => r.record_id);
      const { result, statements } = await statementsOf(() => meetingsOfContacts(db, 'wsb', ids));
      assert.deepEqual(result, []);
      const text = statements.find((s) => /meeting_participants/.test(s));
      assert.ok(text, JSON.stringify(statements));
      // The values sent, in the statement's order (the workspace only if it names one).
      const params = ['$email', 'contact', ...(/"v"\."workspace_id" = (\$\d+|\?)/.test(text) ? ['wsb'] : []), ...ids];
      assert.equal((text.match(/\$\d+|\?/g) ?? []).length, params.length, text);
      if (dialect === 'sqlite') {
        const details = await sqlitePlan(db, text, params);
        assert.ok(
          details.some((d) => /record_values_record/.test(d)),
          JSON.stringify(details),
        );
        return;
      }
      const r = await db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(CompiledQuery.raw(`explain (analyze, format json) ${text}`, params));
      const rows = work(r.rows[0]!['QUERY PLAN'][0]!.Plan, { removed: true });
      assert.ok(rows < 500, `the plan handled ${rows} rows for 25 contacts`);
    });
  });
}
