// ENRICHMENT=on-create writes nothing for enrichment in the create's transaction (docs/enrichment.md
// §Runs): an account create runs exactly the statements it runs with ENRICHMENT=manual, in as many
// round trips on PostgreSQL, and its run is recorded afterwards by a runner reading the change log.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { transactionRoundTrips } from '../../src/db/postgres/connection.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { readCreationLog } from '../helpers/enrichment.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

const ENRICHMENT = /\benrichment_/;
// A workspace's lock key is a number of its own (src/db/rank/lock.ts): the statements are compared without it.
const shape = (statement: string) => statement.replace(/\(-?\d{6,}\)/g, '(N)');
// The key's lookup is cached for a while and its last use written now and then (src/auth/authenticator.ts):
// whether a create reads or touches it depends on the clock, not on what the create writes.
const written = (statements: string[]) => statements.filter((s) => !s.includes('"api_keys"')).map(shape);

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

eachDialect(
  'account creates, ENRICHMENT=manual',
  (ctx) => {
    test('write nothing for enrichment', async () => {
      const t = ctx();
      const seen = await creates(t);
      assert.equal(seen.statements.flat().filter((s) => ENRICHMENT.test(s)).length, 0);
      manual.set(t.dialect, seen);
    });
  },
  { env: { ENRICHMENT: 'manual' } },
);

eachDialect(
  'account creates, ENRICHMENT=on-create',
  (ctx) => {
    test('each runs the statements of a create under manual; a runner records its run from the log', async () => {
      const t = ctx();
      const seen = await creates(t);
      const before = manual.get(t.dialect);
      assert.ok(before, 'the manual creates ran first');
      for (const [i, statements] of seen.statements.entries()) {
        assert.equal(statements.filter((s) => ENRICHMENT.test(s)).length, 0, statements.join('\n'));
        assert.deepEqual(written(statements), written(before.statements[i] ?? []));
      }
      if (t.dialect === 'postgres') assert.deepEqual(seen.trips, before.trips);
      const db = t.deps.db.kysely;
      assert.equal((await db.selectFrom('enrichment_runs').select('id').execute()).length, 0);
      await readCreationLog(t);
      const runs = await db.selectFrom('enrichment_runs').select('trigger').execute();
      assert.deepEqual(
        runs.map((r) => r.trigger),
        ['creation', 'creation', 'creation', 'creation', 'creation'],
      );
    });
  },
  { env: { ENRICHMENT: 'on-create' } },
);
