// A runner's round reads the records of the runs it claimed together, and writes the outcomes its
// runs reach together (docs/enrichment.md §Runs): one read of records per claim, not one per run,
// and one outcome statement per claim when every run fails at once, not one per lane's run.
// A round goes again at once only after a full claim, so a runner that took all there was sends no
// claim that finds nothing. Checked on the statements the runner sends while it drains runs that
// fail at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnrichmentProvider } from '../../src/enrichment/provider.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { readCreationLog, startTestRunner } from '../helpers/enrichment.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

const RUNS = 16;

const failing: EnrichmentProvider = {
  name: 'failing',
  fills: () => ['$linkedIn'],
  canLookUp: () => true,
  lookUp: () => Promise.reject(new Error('nothing here')),
};

const inFlight = async (t: TestApp) =>
  (await t.deps.db.kysely.selectFrom('enrichment_runs').select('id').where('status', 'in', ['queued', 'running']).execute()).length;

eachDialect(
  'an enrichment runner draining runs that fail at once',
  (ctx) => {
    test('reads the records and writes the outcomes once per claim', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (let i = 0; i < RUNS; i++) await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: `A${i}`, $website: ['https://10.0.0.1'] } });
      await readCreationLog(t);
      const { statements } = await statementsOf(async () => {
        const r = startTestRunner(t, [failing]);
        for (let i = 0; i < 400 && (await inFlight(t)) > 0; i++) await sleep(25);
        await r.stop();
      });
      assert.equal(await inFlight(t), 0);
      const claims = statements.filter((q) => /^update "enrichment_runs" set "status" = .*"attempts" = attempts \+ 1/i.test(q)).length;
      const recordReads = statements.filter((q) => /\bfrom "records"/i.test(q)).length;
      const outcomes = statements.filter((q) => /^update "enrichment_runs" set "status" = case/i.test(q)).length;
      // ENRICH_CONCURRENCY=2: claims of 2, 4, 8 and the last 2.
      assert.ok(claims >= 3 && claims <= 5, `${claims} claims`);
      assert.ok(recordReads <= claims, `${recordReads} reads of records for ${claims} claims of ${RUNS} runs`);
      assert.ok(outcomes <= claims, `${outcomes} outcome statements for ${claims} claims of ${RUNS} runs`);
    });

    test('goes again at once after a full claim, and sleeps a poll after one that took all there was', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (let i = 0; i < 5; i++) await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: `B${i}`, $website: ['https://10.0.0.1'] } });
      await readCreationLog(t);
      const { statements } = await statementsOf(async () => {
        // A poll far longer than the test: every round after the first starts at once or not at all.
        const r = startTestRunner(t, [failing], { config: { pollMs: 600_000 } });
        for (let i = 0; i < 400 && (await inFlight(t)) > 0; i++) await sleep(25);
        await sleep(200);
        await r.stop();
      });
      assert.equal(await inFlight(t), 0, 'every run ended without waiting for a poll');
      // ENRICH_CONCURRENCY=2: a claim of 2 (full: the next round starts at once), then one of 4 that
      // takes the last 3 (not full: the runner sleeps). Two rounds, each opening with its read of
      // whether any run is due; a third would be a round that finds nothing.
      const claims = statements.filter((q) => /^update "enrichment_runs" set "status" = .*"attempts" = attempts \+ 1/i.test(q)).length;
      const rounds = statements.filter((q) =>
        /^select "id" from "enrichment_runs" where status in \('queued', 'running'\) and "due_at" <= .* limit/i.test(q),
      ).length;
      assert.deepEqual({ claims, rounds }, { claims: 2, rounds: 2 });
    });
  },
  { env: { ENRICHMENT: 'on-create', ENRICH_CONCURRENCY: '2', ENRICH_POLL_MS: '20' } },
);
