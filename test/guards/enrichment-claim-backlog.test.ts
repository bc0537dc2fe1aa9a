// A runner's claim reads about the runs it takes, however many runs are due behind them
// (src/enrichment/repository.ts `claimDue`, which src/enrichment/outcome.ts `claimRuns` runs): the
// runs abandoned after their last attempt are failed among the earliest due only, as the claim
// takes them. Failing them with a statement of its own over every due run read the whole backlog
// on every claim, and with on-create the runs queued by a burst of creates made each claim slower
// than the last. PostgreSQL: rows read, from the transaction's own statistics
// (pg_stat_xact_user_tables); SQLite: each update finds its rows by id.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Executor } from '../../src/db/types.ts';
import { claimRuns } from '../../src/enrichment/outcome.ts';
import { claimDue } from '../../src/enrichment/repository.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { sqlitePlan } from '../helpers/plans.ts';
import { statementsOf } from '../helpers/sql-spy.ts';
import { write } from '../../src/db/write.ts';

const BACKLOG = 3000;
const LIMIT = 4;
const LONG_AGO = '2026-01-01T00:00:00.000Z';

for (const dialect of testDialects()) {
  describe(`an enrichment claim with ${BACKLOG} runs due [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_b', 'b', ${LONG_AGO})`.execute(db);
      for (let from = 0; from < BACKLOG; from += 500) {
        const rows = Array.from({ length: 500 }, (_, i) => {
          const n = from + i;
          // The two earliest due were left running by a dead runner after their last attempt.
          const dead = n < 2;
          const due = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
          return sql`(${`enr_${String(n).padStart(5, '0')}`}, 'ws_b', 'account', ${`acc_${n}`}, ${dead ? 'running' : 'queued'}, 'creation', '[]', '[]', ${LONG_AGO}, ${LONG_AGO}, ${due}, ${dead ? 3 : 0})`;
        });
        await sql`insert into enrichment_runs (id, workspace_id, entity_type, entity_id, status, trigger, target_fields, named_fields, created_at, updated_at, due_at, attempts)
          values ${sql.join(rows)}`.execute(db);
      }
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    const input = () => ({ token: 't', leaseMs: 60_000, limit: LIMIT, maxAttempts: 3, at: isoNow(Date.now()) });
    // The runner's claim (with the events of the runs it fails); or its statements alone, inside a transaction of the test's.
    const claim = (db: Executor) => claimRuns(db, input());
    const claimIn = async (tx: Executor) => (await claimDue(tx, input())).claimed;

    const checkOutcome = async (claimed: { id: string }[]) => {
      assert.deepEqual(claimed.map((r) => r.id).sort(), ['enr_00002', 'enr_00003', 'enr_00004', 'enr_00005'], 'the earliest due runs still allowed an attempt');
      const dead = await tdb.db.kysely.selectFrom('enrichment_runs').select(['status', 'error']).where('id', 'in', ['enr_00000', 'enr_00001']).execute();
      assert.deepEqual(
        dead.map((r) => ({ ...r })),
        [
          { status: 'failed', error: 'abandoned' },
          { status: 'failed', error: 'abandoned' },
        ],
      );
    };

    if (dialect === 'postgres')
      test(`claiming ${LIMIT} runs reads about ${LIMIT} rows`, async () => {
        await write(tdb.db.kysely, async (tx) => {
          const read = async () =>
            Number(
              (
                await sql<{ n: string }>`select coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) as n
                  from pg_stat_xact_user_tables where relname = 'enrichment_runs' and schemaname = current_schema()`.execute(tx)
              ).rows[0]?.n ?? 0,
            );
          const before = await read();
          const claimed = await claimIn(tx);
          const n = (await read()) - before;
          assert.ok(n <= 10 * LIMIT, `the claim read ${n} rows of a backlog of ${BACKLOG}`);
          return claimed;
        });
        await checkOutcome(await tdb.db.kysely.selectFrom('enrichment_runs').select('id').where('lease_owner', '=', 't').execute());
      });
    else
      test('every update of a claim finds its rows by id, among the earliest due', async () => {
        const db = tdb.db.kysely;
        const { result, statements } = await statementsOf(() => claim(db));
        const updates = statements.filter((s) => /^update "enrichment_runs"/i.test(s));
        assert.equal(updates.length, 2, updates.join('\n'));
        for (const text of updates) {
          const plan = await sqlitePlan(db, text);
          // The top-level search is the update's own: by primary key, from the subquery's ids.
          assert.match(
            plan[0] ?? '',
            /^SEARCH enrichment_runs USING (COVERING )?INDEX sqlite_autoindex_enrichment_runs_1 \(id=\?\)/,
            `${text}\n${plan.join('\n')}`,
          );
        }
        await checkOutcome(result);
      });
  });
}
