// One failing endpoint holds up no other (docs/events.md §Delivery): while workspace A's endpoint
// never answers and its backlog of deliveries keeps falling due for retries, workspace B's events
// still reach B's endpoint about at once, and A's endpoint is still tried (one delivery at a time).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addWebhook } from '../../src/webhooks/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { type Dispatcher, startWebhookDispatcher } from '../../src/jobs/webhook-dispatcher.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { eventually } from '../helpers/smtp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '20',
  WEBHOOK_CONCURRENCY: '2',
  WEBHOOK_TIMEOUT_MS: '400',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_RETRY_MAX_MS: '100',
  WEBHOOK_DISABLE_AFTER_MS: '600000',
};

eachDialect(
  'a failing webhook endpoint',
  (ctx) => {
    let dead: TestReceiver;
    let live: TestReceiver;
    let dispatcher: Dispatcher;
    before(async () => {
      dead = await startReceiver();
      dead.hold = true;
      live = await startReceiver();
      const t = ctx();
      dispatcher = startWebhookDispatcher({ db: t.deps.db, logger: t.deps.logger, webhooks: t.config.webhooks });
    });
    after(async () => {
      await dispatcher.stop();
      await dead.stop();
      await live.stop();
    });

    const subscribe = (t: TestApp, s: Seeded, url: string) =>
      addWebhook(operatorCtx(t.deps.db.kysely, s.workspaceId), { url, events: 'all', allowPrivate: true });

    test("holds up no other endpoint's deliveries, and is still tried", async () => {
      const t = ctx();
      const a = await seedWorkspace(t);
      const b = await seedWorkspace(t);
      await subscribe(t, a, dead.url);
      await subscribe(t, b, live.url);
      // A backlog for the dead endpoint, of more objects than a claim takes (WEBHOOK_CONCURRENCY × 8).
      for (let i = 0; i < 40; i++) await call(t, a.secret, 'POST', '/v1/accounts', { fields: { $name: `A ${i}` } });
      await eventually('the dead endpoint is tried', () => dead.held.length >= 2, 10_000);
      await new Promise((r) => setTimeout(r, 1500));
      const heldBefore = dead.held.length;
      const started = Date.now();
      const acc = (await call(t, b.secret, 'POST', '/v1/accounts', { fields: { $name: 'B' } })).json();
      await eventually('B’s event reaches B’s endpoint', () => live.received.some((x) => JSON.parse(x.body).data.object.id === acc.id), 10_000);
      const waited = Date.now() - started;
      assert.ok(waited < 2500, `B's event waited ${waited} ms behind A's failing endpoint`);
      await eventually('the dead endpoint is still tried', () => dead.held.length > heldBefore, 5000);
    });
  },
  { env: ENV },
);
