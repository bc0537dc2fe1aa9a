// A runner's claim reads the runs in flight through the partial index of due runs, never the
// runs that ended (src/enrichment/repository.ts): every statement names the index's condition as
// text, since SQLite uses a partial index only where the statement's WHERE implies the index's,
// which a bound parameter never proves. Checked on the plans of the statements a claim runs, with
// a table of ended runs to scan. PostgreSQL's prepared statements are held to the same text.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { claimRuns } from '../../src/enrichment/outcome.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { sqlitePlan } from '../helpers/plans.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

describe('an enrichment claim on SQLite [sqlite]', () => {
  let tdb: TestDb;
  before(async () => {
    tdb = await createTestDb('sqlite');
    const db = tdb.db.kysely;
    const at = isoNow(Date.UTC(2026, 0, 1));
    await sql`insert into workspaces (id, name, created_at) values ('ws_c', 'c', ${at})`.execute(db);
    const rows = Array.from(
      { length: 200 },
      (_, i) => sql`(${`enr_${i}`}, 'ws_c', 'account', ${`acc_${i}`}, ${i < 190 ? 'failed' : 'queued'}, 'creation', '[]', '[]', ${at}, ${at}, ${at}, 1)`,
    );
    await sql`insert into enrichment_runs (id, workspace_id, entity_type, entity_id, status, trigger, target_fields, named_fields, created_at, updated_at, due_at, attempts)
      values ${sql.join(rows)}`.execute(db);
  });
  after(() => tdb.drop());

  test('every statement of a claim reads enrichment_runs through an index', async () => {
    const db = tdb.db.kysely;
    const { result, statements } = await statementsOf(() => claimRuns(db, { token: 't', leaseMs: 60_000, limit: 4, maxAttempts: 3, at: isoNow(Date.now()) }));
    assert.equal(result.length, 4);
    const claims = statements.filter((s) => s.includes('enrichment_runs'));
    assert.equal(claims.length, 3, claims.join('\n'));
    for (const text of claims) {
      // Unbound parameters plan as NULL: the plan is the one any values get.
      const plan = await sqlitePlan(db, text);
      assert.ok(!plan.some((d) => /^SCAN enrichment_runs\b/.test(d)), `${text}\n${plan.join('\n')}`);
    }
  });
});
