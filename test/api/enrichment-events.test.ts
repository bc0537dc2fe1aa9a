// The event of an enrichment run's end (docs/events.md §Types, docs/enrichment.md §Runs), on both
// databases: one `enrichment_run.completed` per run that ends, whatever it ends as (completed, failed
// by its provider, timed_out, failed by a claim after its last attempt), appended with the run's
// final state; its `data.object` is the run as GET /v1/enrichmentRun/{id} answers it. It reaches a
// webhook that takes the type and one that takes all, and `webhook replay` queues it again.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { EnrichmentProvider } from '../../src/enrichment/provider.ts';
import type { EnrichmentRunner } from '../../src/jobs/enrichment.ts';
import { type Dispatcher, startWebhookDispatcher } from '../../src/jobs/webhook-dispatcher.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { startTestRunner } from '../helpers/enrichment.ts';
import { eventually } from '../helpers/smtp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20', ENRICH_POLL_MS: '20', ENRICH_TIMEOUT_MS: '300' };

/** Fills `$linkedIn`, except for the accounts named `Fails` (its lookup throws) and `Slow` (it never answers). */
const provider: EnrichmentProvider = {
  name: 'test',
  fills: () => ['$linkedIn', '$twitter', '$facebook', '$instagram'],
  canLookUp: () => true,
  lookUp: async (subject) => {
    if (subject.fields.$name === 'Fails') throw new Error('nothing here');
    if (subject.fields.$name === 'Slow') return new Promise(() => {});
    return { $linkedIn: 'https://www.linkedin.com/company/acme-anvils' };
  },
};

eachDialect(
  'the event of an enrichment run',
  (ctx) => {
    let receiver: TestReceiver;
    let dispatcher: Dispatcher;
    let runner: EnrichmentRunner;
    before(async () => {
      receiver = await startReceiver();
      const t = ctx();
      dispatcher = startWebhookDispatcher({ db: t.deps.db, logger: t.deps.logger, webhooks: t.config.webhooks });
      runner = startTestRunner(t, [provider]);
    });
    after(async () => {
      await runner.stop();
      await dispatcher.stop();
      await receiver.stop();
    });

    async function rolodex(t: TestApp, ...args: string[]): Promise<any> {
      const out: string[] = [];
      const err: string[] = [];
      const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}), ...ENV };
      const io: Io = { out: (x) => out.push(x), err: (x) => err.push(x), env, isTty: false };
      assert.equal(await main([...args, '--json'], io), 0, `${args.join(' ')}: ${err.join('')}`);
      return JSON.parse(out.join(''));
    }
    async function settled(t: TestApp, secret: string, runId: string): Promise<any> {
      for (let i = 0; i < 400; i++) {
        const run = (await call(t, secret, 'GET', `/v1/enrichmentRun/${runId}`)).json();
        if (!['queued', 'running'].includes(run.status)) return run;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`run ${runId} did not end`);
    }

    test('one enrichment_run.completed per run that ends, with the run as the API shows it, delivered and replayed', async () => {
      const t = ctx();
      const db = t.deps.db.kysely;
      const s = await seedWorkspace(t);
      const only = await rolodex(t, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, '--events', 'enrichment_run.completed');
      await rolodex(t, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, '--all');
      const start = async (name: string) => {
        const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: name, $website: ['https://acme.test'] } })).json();
        const answer = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json();
        assert.equal(answer.status, 'started', JSON.stringify(answer));
        return answer.enrichmentRun.id as string;
      };
      const runs = { completed: await start('Acme'), failed: await start('Fails'), timed_out: await start('Slow') };
      for (const id of Object.values(runs)) await settled(t, s.secret, id);

      // A run left running by a dead process after its last attempt: failed by the claim that meets it.
      await runner.stop();
      let abandoned: string;
      try {
        abandoned = await start('Orphan');
        await db
          .updateTable('enrichment_runs')
          .set({ status: 'running', lease_owner: 'dead', due_at: '2000-01-01T00:00:00.000Z', attempts: 3 })
          .where('id', '=', abandoned)
          .execute();
      } finally {
        runner = startTestRunner(t, [provider]);
      }
      const orphan = await settled(t, s.secret, abandoned);
      assert.equal(orphan.status, 'failed');

      const events = (await db.selectFrom('events').select('body').where('workspace_id', '=', s.workspaceId).orderBy('seq').execute())
        .map((r) => JSON.parse(r.body))
        .filter((e) => e.type === 'enrichment_run.completed');
      const expected = { ...runs, abandoned };
      assert.equal(events.length, 4, `one event per run that ended: ${JSON.stringify(events.map((e) => e.data.object.id))}`);
      assert.deepEqual(events.map((e) => e.data.object.id).sort(), Object.values(expected).sort(), 'one event per run');
      for (const [status, id] of Object.entries({ ...runs, failed_too: abandoned })) {
        const e = events.find((x) => x.data.object.id === id);
        const run = (await call(t, s.secret, 'GET', `/v1/enrichmentRun/${id}`)).json();
        assert.equal(run.status, status === 'failed_too' ? 'failed' : status);
        assert.deepEqual(Object.keys(e.data), ['object']);
        assert.deepEqual(e.data.object, run, 'the run as GET /v1/enrichmentRun/{id} answers it');
        assert.equal(e.occurredAt, run.completedAt);
        assert.equal(e.workspaceId, s.workspaceId);
        assert.deepEqual(e.actor, { type: 'operator', id: null });
        assert.match(e.id, /^evt_[0-9a-z]{26}$/);
      }

      // Both subscriptions take each of them: the one naming the type and the one taking all.
      const ids = events.map((e) => e.id as string);
      const received = (id: string) => receiver.received.filter((x) => x.headers['webhook-id'] === id).length;
      await eventually('each run event delivered twice', () => ids.every((id) => received(id) === 2), 20_000);
      // A delivery's row goes once the receiver's answer is read, a moment after the receiver
      // counted it; a replay meanwhile finds the row and queues nothing more for that event.
      const pending = async () =>
        Number(
          (
            await db
              .selectFrom('webhook_deliveries')
              .select((e) => e.fn.countAll().as('n'))
              .where('event_id', 'in', ids)
              .executeTakeFirst()
          )?.n ?? 0,
        );
      await eventually('the deliveries settled', async () => (await pending()) === 0, 20_000);
      const replay = await rolodex(t, 'webhook', 'replay', only.id, '--since', '2000-01-01T00:00:00Z');
      assert.equal(replay.queued, 4, 'replay queues the run events again, and only those for a subscription to the type');
      await eventually('each run event delivered again', () => ids.every((id) => received(id) === 3), 20_000);
    });
  },
  { env: { ...ENV } },
);
