// The records' read (recordsWithVersion, src/records/repository.ts) brings with each record the
// rows of other records pointing at it. Every record's rows are found through the inverse index,
// whatever the statistics say (docs/design.md §Database statistics): here a thousand contacts
// all point at one account, so the sampled statistics see a single target, and a plan built on
// them scans all of `entity_relationships` once per record of a page. Checked on the statement
// a page of 25 contacts sends: on PostgreSQL by EXPLAIN ANALYZE of its generic plan (the rows
// every node handled stay near the page's), on SQLite by its query plan (no scan of the table).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { systemCtx } from '../../src/lib/context.ts';
import { recordsWithVersion } from '../../src/records/repository.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { genericPlan, sqlitePlan, work } from '../helpers/plans.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

const CONTACTS = 1000;

for (const dialect of testDialects()) {
  describe(`a page of records reads the rows pointing at them through the index [${dialect}]`, () => {
    let tdb: TestDb;
    let ws = '';
    const ids: string[] = [];
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      ws = (await createWorkspace(systemCtx(db), { name: 'one account' })).id;
      const at = '2026-01-01T00:00:00.000Z';
      const row = (id: string, kind: string) => ({ id, workspace_id: ws, kind, external_id: null, fields: '{}', created_at: at, updated_at: at });
      const records = [row('acc_one', 'account')];
      const links = [];
      for (let j = 0; j < CONTACTS; j++) {
        const id = `con_${String(j).padStart(6, '0')}`;
        ids.push(id);
        records.push(row(id, 'contact'));
        links.push({ source_id: id, name: '$account', object_type: 'account', target_id: 'acc_one', position: 0 });
      }
      for (let i = 0; i < records.length; i += 500)
        await db
          .insertInto('records')
          .values(records.slice(i, i + 500))
          .execute();
      for (let i = 0; i < links.length; i += 500)
        await db
          .insertInto('entity_relationships')
          .values(links.slice(i, i + 500))
          .execute();
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    test('the statement of a page of 25 contacts', async () => {
      const db = tdb.db.kysely;
      const page = ids.slice(500, 525);
      const { result, statements } = await statementsOf(() => recordsWithVersion(db, ws, 'contact', page));
      assert.equal(result.rows.size, 25);
      assert.deepEqual(
        [...result.inverse.values()],
        Array.from({ length: 25 }, () => []),
      );
      const text = statements.find((s) => /inverse_rows/.test(s));
      assert.ok(text, JSON.stringify(statements));
      if (dialect === 'sqlite') {
        const details = await sqlitePlan(db, text, [JSON.stringify(page)]);
        assert.ok(!details.some((d) => /^SCAN (entity_relationships|e)\b/.test(d)), JSON.stringify(details));
        return;
      }
      // Every node's rows count with those its filters dropped: a scan filtering the table handled all of it.
      const rows = work(await genericPlan(db, text, [`{${page.join(',')}}`]), { removed: true });
      // 25 records, each with its subqueries' few rows: a scan per record handles 25 × 1,000.
      assert.ok(rows < 1000, `the plan handled ${rows} rows for a page of 25`);
    });
  });
}
