// A runner's claims while runs pile up (docs/enrichment.md §Runs), on both databases: a claim takes
// more runs each time the last one was full, so a backlog is drained in fewer claims than runs over
// ENRICH_CONCURRENCY, while no more than ENRICH_CONCURRENCY runs execute at once; a runner that stops
// gives back the runs it claimed and has not started, queued, their attempt uncounted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnrichmentProvider, Subject } from '../../src/enrichment/provider.ts';
import { CLAIM_GROWTH } from '../../src/jobs/enrichment.ts';
import { statementsOf } from '../helpers/sql-spy.ts';
import { call, eachDialect, keyFor, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { queueRuns, readCreationLog, startTestRunner } from '../helpers/enrichment.ts';

const CONCURRENCY = 2;
const RUNS = 60;

/** A provider that finds nothing after `ms`, counting the lookups under way. */
function slowProvider(ms: number) {
  const seen = { now: 0, most: 0, started: 0 };
  const provider: EnrichmentProvider = {
    name: 'slow',
    fills: () => ['$linkedIn'],
    canLookUp: () => true,
    async lookUp() {
      seen.started++;
      seen.most = Math.max(seen.most, ++seen.now);
      await sleep(ms);
      seen.now--;
      return {};
    },
  };
  return { provider, seen };
}

const inFlight = async (t: TestApp) =>
  Number(
    (
      await t.deps.db.kysely
        .selectFrom('enrichment_runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirstOrThrow()
    ).n,
  );

eachDialect(
  'enrichment claims while runs pile up',
  (ctx) => {
    test(`${RUNS} runs due: fewer claims than ${RUNS / CONCURRENCY}, never more than ${CONCURRENCY} lookups at once`, async () => {
      const t = ctx();
      await queueRuns(t, RUNS);
      const { provider, seen } = slowProvider(5);
      const { statements } = await statementsOf(async () => {
        const r = startTestRunner(t, [provider]);
        for (let i = 0; i < 400 && (await inFlight(t)) > 0; i++) await sleep(25);
        await r.stop();
      });
      assert.equal(await inFlight(t), 0);
      assert.equal(seen.started, RUNS);
      assert.ok(seen.most <= CONCURRENCY, `${seen.most} lookups at once`);
      const claims = statements.filter((s) => /^update "enrichment_runs" set "status" = .*"lease_owner" = .*"attempts" = attempts \+ 1/i.test(s)).length;
      // 2, 4, 8, 16, then 16 a claim (CLAIM_GROWTH times the concurrency): 7 claims, and one that finds none.
      assert.ok(claims <= 8, `${claims} claims for ${RUNS} runs`);
      assert.ok(claims > Math.ceil(RUNS / (CONCURRENCY * CLAIM_GROWTH)), `${claims} claims`);
    });

    test("a claimed run's provider sees its record as stored: values and own relationships", async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const seen: Subject[] = [];
      const recording: EnrichmentProvider = {
        name: 'recording',
        fills: (type) => (type === 'contact' ? ['$profilePhotoUrl'] : ['$linkedIn']),
        canLookUp: () => true,
        async lookUp(subject) {
          seen.push(subject);
          return {};
        },
      };
      const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json<{ id: string }>();
      const created = await call(t, s.secret, 'POST', '/v1/contacts', {
        fields: { $name: { firstName: 'Ada', lastName: 'L' }, $email: ['ada@acme.example'] },
        relationships: { $account: account.id },
      });
      assert.equal(created.statusCode, 200, created.body);
      const contact = created.json<{ id: string }>();
      await readCreationLog(t, [recording]);
      const r = startTestRunner(t, [recording]);
      for (let i = 0; i < 400 && (await inFlight(t)) > 0; i++) await sleep(25);
      await r.stop();
      const mine = seen.find((x) => x.id === contact.id);
      assert.ok(mine, `the contact's run looked up: ${seen.map((x) => x.id).join(', ')}`);
      assert.deepEqual({ email: mine.fields.$email, account: mine.relationships.get('$account') }, { email: ['ada@acme.example'], account: [account.id] });
    });

    test('a runner that stops gives back the runs it claimed and has not started', async () => {
      const t = ctx();
      const ws = await queueRuns(t, 40);
      const { provider, seen } = slowProvider(50);
      const r = startTestRunner(t, [provider]);
      // Two full claims (2, then 4) and the third (8) under way.
      for (let i = 0; i < 400 && seen.started < 7; i++) await sleep(5);
      const stopping = new Date().toISOString();
      await r.stop();
      const rows = await t.deps.db.kysely
        .selectFrom('enrichment_runs')
        .select(['id', 'status', 'attempts', 'lease_owner', 'started_at', 'created_at', 'updated_at'])
        .where('workspace_id', '=', ws)
        .execute();
      const ended = rows.filter((row) => row.status === 'completed').length;
      assert.equal(ended, seen.started, 'every run started ended');
      assert.ok(ended < 40);
      const back = rows.filter((x) => x.status !== 'completed');
      for (const { id: _, created_at: _c, updated_at: _u, ...row } of back)
        assert.deepEqual({ ...row }, { status: 'queued', attempts: 0, lease_owner: null, started_at: null });
      // A run claimed and given back changed (running, then queued again): its updatedAt moved when
      // it was given back. One never claimed is as it was queued.
      const given = back.filter((x) => x.updated_at !== x.created_at);
      assert.ok(given.length > 0, 'the third claim gave back runs');
      for (const x of given) assert.ok(x.updated_at >= stopping, `given back at ${x.updated_at}, before the runner stopped at ${stopping}`);
      // As the API answers it: queued, never begun (docs/enrichment.md: startedAt is null while it is queued).
      const run = (await call(t, await keyFor(t, ws, null), 'GET', `/v1/enrichmentRun/${given[0]!.id}`)).json();
      assert.deepEqual(
        { status: run.status, startedAt: run.startedAt, updatedAt: run.updatedAt },
        { status: 'queued', startedAt: null, updatedAt: given[0]!.updated_at },
      );
    });
  },
  { env: { ENRICHMENT: 'on-create', ENRICH_CONCURRENCY: String(CONCURRENCY), ENRICH_POLL_MS: '20' } },
);
