// A slow endpoint and another workspace's fast one (docs/events.md §Delivery), on both databases:
// the fast endpoint's event, claimed in the same round as the slow one's backlog, arrives after
// about one slow attempt, not after the slow endpoint has answered every row of it the round took;
// the slow endpoint still gets each of its events, once. Before, the workers worked the slow
// endpoint's rows one after another and the round, and with it every other endpoint, waited for
// all of them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { type Dispatcher, startWebhookDispatcher } from '../../src/jobs/webhook-dispatcher.ts';
import { addWebhook } from '../../src/webhooks/service.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { eventually } from '../helpers/smtp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

const SLOW_MS = 1000;
const BACKLOG = 10;

eachDialect(
  'a slow endpoint',
  (ctx) => {
    let slow: TestReceiver;
    let fast: TestReceiver;
    let dispatcher: Dispatcher | undefined;
    before(async () => {
      [slow, fast] = [await startReceiver(), await startReceiver()];
      slow.delayMs = SLOW_MS;
    });
    after(async () => {
      await dispatcher?.stop();
      await slow.stop();
      await fast.stop();
    });

    test("holds up another workspace's endpoint for about one of its attempts, not for its backlog", async () => {
      const t = ctx();
      const [x, y] = [await seedWorkspace(t), await seedWorkspace(t)];
      await addWebhook(operatorCtx(t.deps.db.kysely, x.workspaceId), { url: slow.url, events: 'all', allowPrivate: true });
      await addWebhook(operatorCtx(t.deps.db.kysely, y.workspaceId), { url: fast.url, events: 'all', allowPrivate: true });
      // The slow endpoint's backlog first, then the fast one's event: one claim takes them all.
      for (let i = 0; i < BACKLOG; i++) await call(t, x.secret, 'POST', '/v1/accounts', { fields: { $name: `x${i}` } });
      await call(t, y.secret, 'POST', '/v1/accounts', { fields: { $name: 'y' } });
      const started = Date.now();
      dispatcher = startWebhookDispatcher({ db: t.deps.db, logger: t.deps.logger, webhooks: t.config.webhooks });
      await eventually('the fast endpoint is sent its event', () => fast.received.length === 1, 30_000);
      const waited = Date.now() - started;
      // Two workers on the backlog one after another took BACKLOG / 2 slow attempts (5 s).
      assert.ok(waited < 2.5 * SLOW_MS, `the fast endpoint waited ${waited} ms behind the slow one`);
      await eventually('the slow endpoint is sent its backlog', () => slow.received.length >= BACKLOG, 30_000);
      await eventually('the outbox is empty', async () => (await t.deps.db.kysely.selectFrom('webhook_deliveries').select('id').execute()).length === 0);
      assert.equal(new Set(slow.ids()).size, BACKLOG);
      assert.equal(slow.received.length, BACKLOG, 'a row given back untried is not sent twice');
    });
  },
  { env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20', WEBHOOK_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '5000' } },
);
