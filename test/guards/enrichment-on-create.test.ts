// ENRICHMENT=on-create queues a run in the create's own transaction without a statement the create
// waits for (docs/enrichment.md §Runs): the record is the one the create answers, never read back,
// and the run's row goes out with the create's statements. An account create thus runs the
// statements it runs with ENRICHMENT=manual plus the run's insert, in as many round trips on
// PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { transactionRoundTrips } from '../../src/db/postgres/connection.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

const RUN_INSERT = 'insert into "enrichment_runs"';
// A workspace's lock key is a number of its own (src/db/rank/lock.ts): the statements are compared without it.
const shape = (statement: string) => statement.replace(/\(-?\d{6,}\)/g, '(N)');

/** The statements and transaction round trips of each of 5 account creates, each with a website. */
async function creates(t: TestApp): Promise<{ statements: string[][]; trips: number[] }> {
  const s = await seedWorkspace(t);
  const out = { statements: [] as string[][], trips: [] as number[] };
  for (let i = 0; i < 5; i++) {
    const before = transactionRoundTrips();
    const { result, statements } = await statementsOf(() =>
      call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: `Account ${i}`, $website: [`https://a${i}.example.test`] } }),
    );
    assert.equal(result.statusCode, 200, result.body);
    out.trips.push(transactionRoundTrips() - before);
    out.statements.push(statements);
  }
  return out;
}

const manual = new Map<string, Awaited<ReturnType<typeof creates>>>();

await eachDialect(
  'account creates, ENRICHMENT=manual',
  (ctx) => {
    test('queue no run', async () => {
      const t = ctx();
      const seen = await creates(t);
      assert.equal(seen.statements.flat().filter((s) => s.startsWith(RUN_INSERT)).length, 0);
      manual.set(t.dialect, seen);
    });
  },
  { env: { ENRICHMENT: 'manual' } },
);

await eachDialect(
  'account creates, ENRICHMENT=on-create',
  (ctx) => {
    test('each adds only the insert of its run, in no round trip of its own', async () => {
      const t = ctx();
      const seen = await creates(t);
      const before = manual.get(t.dialect);
      assert.ok(before, 'the manual creates ran first');
      for (const [i, statements] of seen.statements.entries()) {
        assert.equal(statements.filter((s) => s.startsWith(RUN_INSERT)).length, 1, statements.join('\n'));
        assert.deepEqual(statements.filter((s) => !s.startsWith(RUN_INSERT)).map(shape), before.statements[i]?.map(shape));
      }
      if (t.dialect === 'postgres') assert.deepEqual(seen.trips, before.trips);
      const runs = await t.deps.db.kysely.selectFrom('enrichment_runs').select('trigger').execute();
      assert.deepEqual(
        runs.map((r) => r.trigger),
        ['creation', 'creation', 'creation', 'creation', 'creation'],
      );
    });
  },
  { env: { ENRICHMENT: 'on-create' } },
);
