// The reads behind a page's derived meetings (src/meetings/repository.ts) find their rows by
// record id, whatever the statistics say (docs/design.md §Database statistics): the meetings of
// many contacts through the contacts' own `$email` rows of the value index, the contacts of an
// account through the inverse index of relationships and each contact's record by its id. Here the
// statistics were taken before a second workspace wrote its contacts (as during and just after a
// large import): they take that workspace for an empty one, and plans built on them read the
// workspace's whole `$email` range, or its whole listing of contacts, for the few asked for (1.4 s
// and 0.9 s on PostgreSQL right after imports of 300,000 and 1,000,000 contacts committed).
// Checked on the statement sent: on PostgreSQL by EXPLAIN ANALYZE of its plan for the values sent
// (the rows every node handled stay near those asked for), on SQLite by its query plan (the index
// by record id).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { contactsOfAccounts, meetingsOfContacts } from '../../src/meetings/repository.ts';
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

const AT = '2026-01-01T00:00:00.000Z';
const contacts = (ws: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `con_${ws}_${String(from + i).padStart(6, '0')}`,
    workspace_id: ws,
    kind: 'contact',
    external_id: null,
    fields: '{}',
    created_at: AT,
    updated_at: AT,
  }));
/** Each contact's `$account`: one of 1,000 accounts of its workspace. */
const links = (ws: string, from: number, n: number) =>
  contacts(ws, from, n).map((c, i) => ({
    source_id: c.id,
    name: '$account',
    object_type: 'account',
    target_id: `acc_${ws}_${(from + i) % 1000}`,
    position: 0,
  }));

/** EXPLAIN ANALYZE of `text` run with `params` (a plan for those values): the rows its nodes handled. */
async function handled(db: TestDb['db']['kysely'], text: string, params: readonly unknown[]): Promise<number> {
  const r = await db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(CompiledQuery.raw(`explain (analyze, format json) ${text}`, [...params]));
  return work(r.rows[0]!['QUERY PLAN'][0]!.Plan, { removed: true });
}

for (const dialect of testDialects()) {
  describe(`the meetings of a page of contacts are found by record id [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      const write = async (ws: string, n: number) => {
        for (let i = 0; i < n; i += 500) {
          await db
            .insertInto('record_values')
            .values(emails(ws, i, 500))
            .execute();
          await db
            .insertInto('records')
            .values(contacts(ws, i, 500))
            .execute();
          await db
            .insertInto('entity_relationships')
            .values(links(ws, i, 500))
            .execute();
        }
      };
      for (const ws of ['wsa', 'wsb']) await db.insertInto('workspaces').values({ id: ws, name: ws, created_at: AT }).execute();
      await write('wsa', 2000);
      await sql`analyze`.execute(db);
      // Written after the statistics were taken: the workspace they do not know.
      await write('wsb', 3000);
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
      const rows = await handled(db, text, params);
      assert.ok(rows < 500, `the plan handled ${rows} rows for 25 contacts`);
    });

    test('the contacts of an account of a workspace the statistics do not know', async () => {
      const db = tdb.db.kysely;
      const { result, statements } = await statementsOf(() => contactsOfAccounts(db, 'wsb', ['acc_wsb_7']));
      assert.deepEqual(result.get('acc_wsb_7'), ['con_wsb_000007', 'con_wsb_001007', 'con_wsb_002007']);
      const text = statements.find((s) => /entity_relationships/.test(s));
      assert.ok(text, JSON.stringify(statements));
      // The values sent, in the statement's order (the type and workspace only if it names them).
      const params = ['acc_wsb_7', '$account', ...(/"r"\."kind" = (\$\d+|\?)/.test(text) ? ['contact', 'wsb'] : [])];
      assert.equal((text.match(/\$\d+|\?/g) ?? []).length, params.length, text);
      if (dialect === 'sqlite') {
        const details = await sqlitePlan(db, text, params);
        assert.ok(!details.some((d) => /^SCAN|records_listing/.test(d)), JSON.stringify(details));
        return;
      }
      const rows = await handled(db, text, params);
      assert.ok(rows < 500, `the plan handled ${rows} rows for the 3 contacts of an account`);
    });
  });
}
