// A meeting's derived relationships (src/meetings/repository.ts derivedOf) are read with work that
// follows the rows found, whatever the statistics say (docs/design.md §Database statistics). Here
// the tables were never analyzed, as in a young database (autovacuum kept off them): joined in one
// statement, a planner that takes them for empty ones nests a scan of every relationship row
// inside another for each contact, millions of rows for 100 contacts of 3 accounts, and a meeting
// with a few hundred new attendees outlasts any deadline. Checked on each statement sent: on
// PostgreSQL by EXPLAIN ANALYZE for the values sent (the rows every node handled), on SQLite by its
// query plan (no full scan of the relationships).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { derivedOf } from '../../src/meetings/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { type PlanNode, sqlitePlan, work } from '../helpers/plans.ts';
import { queriesOf } from '../helpers/sql-spy.ts';

const AT = '2026-01-01T00:00:00.000Z';
const N = 100;
const contact = (i: number) => `con_${String(i).padStart(4, '0')}`;
const email = (i: number) => `p${i}@d${i % 3}.test`;
const record = (id: string, kind: string) => ({ id, workspace_id: 'wsa', kind, external_id: null, fields: '{}', created_at: AT, updated_at: AT });
const link = (source: string, target: string) => ({ source_id: source, name: '$account', object_type: 'account', target_id: target, position: 0 });

for (const dialect of testDialects()) {
  describe(`a meeting's derived relationships on tables never analyzed [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      if (dialect === 'postgres')
        for (const table of ['record_values', 'records', 'entity_relationships'])
          await sql`alter table ${sql.table(table)} set (autovacuum_enabled = false)`.execute(db);
      await db.insertInto('workspaces').values({ id: 'wsa', name: 'wsa', created_at: AT }).execute();
      const ids = Array.from({ length: N }, (_, i) => i);
      await db
        .insertInto('records')
        .values([
          ...ids.map((i) => record(contact(i), 'contact')),
          ...[0, 1, 2].map((a) => record(`acc_${a}`, 'account')),
          record('opp_0', 'opportunity'),
          record('opp_1', 'opportunity'),
        ])
        .execute();
      await db
        .insertInto('record_values')
        .values(
          ids.map((i) => ({ workspace_id: 'wsa', object_type: 'contact', field: '$email', record_id: contact(i), value_text: email(i), value_num: null })),
        )
        .execute();
      await db
        .insertInto('entity_relationships')
        .values([...ids.map((i) => link(contact(i), `acc_${i % 3}`)), link('opp_0', 'acc_0'), link('opp_1', 'acc_0')])
        .execute();
    });
    after(() => tdb.drop());

    test(`${N} contacts of 3 accounts, and the opportunities of one`, async () => {
      const db = tdb.db.kysely;
      const { result, queries } = await queriesOf(() =>
        derivedOf(
          db,
          'wsa',
          Array.from({ length: N }, (_, i) => email(i)),
        ),
      );
      assert.equal(result.contacts.length, N);
      assert.ok(result.contacts.every((c) => c.account === `acc_${Number(c.contact.slice(4)) % 3}`));
      assert.deepEqual(result.opportunities.get('acc_0'), ['opp_0', 'opp_1']);
      assert.equal(result.opportunities.get('acc_1'), undefined);
      const reads = queries.filter((q) => /entity_relationships/.test(q.text));
      assert.ok(reads.length > 0, JSON.stringify(queries.map((q) => q.text)));
      for (const q of reads) {
        if (dialect === 'sqlite') {
          const details = await sqlitePlan(db, q.text, q.params);
          assert.ok(!details.some((d) => /^SCAN (a|o|e|entity_relationships)\b/.test(d)), JSON.stringify(details));
          continue;
        }
        const r = await db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
          CompiledQuery.raw(`explain (analyze, format json) ${q.text}`, [...q.params]),
        );
        const rows = work(r.rows[0]!['QUERY PLAN'][0]!.Plan, { removed: true });
        // Every contact against every relationship row is about 10,000; against every pair, a million.
        assert.ok(rows < 50_000, `the plan handled ${rows} rows for ${N} contacts: ${q.text}`);
      }
    });
  });
}
