// A webhook dispatcher's claim (src/webhooks/claim-repository.ts claimDue) finds each row it claims
// by its id, whatever the statistics say (docs/design.md §Database statistics). Here the outbox was
// never analyzed, as in a young database (autovacuum kept off it): planned from default estimates,
// the candidates' rows were joined by a read of every due row, and the update's ids by a scan of
// the outbox, each row compared with every id; a claim then handled some six rows per row of the
// backlog (tens of thousands for 2,000 or 5,000), where it handles about the rows it claims once the
// table is analyzed (test/guards/webhook-claim-plan.test.ts). Checked on each statement a claim
// sends, by EXPLAIN ANALYZE for the values sent (the rows every node handled), rolled back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { claimDue } from '../../src/webhooks/claim-repository.ts';
import { write } from '../../src/db/write.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { type PlanNode, work } from '../helpers/plans.ts';
import { queriesOf } from '../helpers/sql-spy.ts';

const LIMIT = 16;

class RolledBack extends Error {}

/** Runs `fn` in a transaction that is rolled back, and returns what it gave. */
async function rolledBack<T>(db: TestDb['db']['kysely'], fn: (tx: Parameters<Parameters<typeof write>[1]>[0]) => Promise<T>): Promise<T> {
  let out: T | undefined;
  await write(db, async (tx) => {
    out = await fn(tx);
    throw new RolledBack();
  }).catch((err: unknown) => {
    if (!(err instanceof RolledBack)) throw err;
  });
  return out as T;
}

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  for (const BACKLOG of [2000, 5000])
    describe(`a webhook claim beside a backlog of ${BACKLOG} deliveries never analyzed [${dialect}]`, () => {
      let tdb: TestDb;
      before(async () => {
        tdb = await createTestDb(dialect);
        const db = tdb.db.kysely;
        for (const table of ['webhook_deliveries', 'webhook_subscriptions'])
          await sql`alter table ${sql.table(table)} set (autovacuum_enabled = false)`.execute(db);
        await sql`insert into workspaces (id, name, created_at) values ('wsp_1', 'W', '2026-01-01T00:00:00.000Z')`.execute(db);
        for (const id of ['whk_busy', 'whk_other'])
          await sql`insert into webhook_subscriptions (id, workspace_id, url, secret, all_events, created_at)
          values (${id}, 'wsp_1', 'http://127.0.0.1:9/', ${`whsec_${id}`}, 1, '2026-01-01T00:00:00.000Z')`.execute(db);
        // The busy endpoint's backlog, all due, older than the other endpoint's three rows.
        for (let from = 0; from < BACKLOG + 3; from += 500) {
          const rows = Array.from({ length: Math.min(500, BACKLOG + 3 - from) }, (_, i) => {
            const n = from + i + 1;
            const sub = n <= BACKLOG ? 'whk_busy' : 'whk_other';
            return sql`(${`evt_${n}:${sub}`}, ${sub}, ${`evt_${n}`}, ${n}, ${`con_${n}`}, '2026-01-01T00:00:00.000Z', 0, 0)`;
          });
          await sql`insert into webhook_deliveries (id, subscription_id, event_id, event_seq, object_id, next_attempt_at, attempts, parked)
          values ${sql.join(rows)}`.execute(db);
        }
      });
      after(() => tdb.drop());

      test(`claiming ${LIMIT} rows handles about as many, not the backlog`, async () => {
        const db = tdb.db.kysely;
        const { result, queries } = await queriesOf(() => rolledBack(db, (tx) => claimDue(tx, { token: 't', leaseMs: 60_000, limit: LIMIT })));
        assert.equal(result.length, LIMIT);
        assert.deepEqual(
          result.filter((r) => r.subscription_id === 'whk_other').map((r) => Number(r.event_seq)),
          [BACKLOG + 1, BACKLOG + 2, BACKLOG + 3],
        );
        const reads = queries.filter((q) => /webhook_deliveries/.test(q.text));
        assert.ok(
          reads.some((q) => /^update/.test(q.text)),
          JSON.stringify(queries.map((q) => q.text)),
        );
        for (const q of reads) {
          const plan = await rolledBack(db, async (tx) => {
            const r = await tx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
              CompiledQuery.raw(`explain (analyze, format json) ${q.text}`, [...q.params]),
            );
            return r.rows[0]!['QUERY PLAN'][0]!.Plan;
          });
          const rows = work(plan, { removed: true });
          // PostgreSQL may read an outbox of 2,000 rows once rather than look up 16 ids (cheaper on
          // so few pages); every row against each id, or every due row per candidate, is ten times that.
          assert.ok(rows < 3000, `the plan handled ${rows} rows for a claim of ${LIMIT}: ${q.text}`);
        }
      });
    });
