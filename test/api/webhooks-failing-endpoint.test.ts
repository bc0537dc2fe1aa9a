// One failing endpoint holds up no other (docs/events.md §Delivery): while workspace A's endpoint
// never answers and its backlog of deliveries keeps falling due for retries, workspace B's events
// still reach B's endpoint about at once, and A's endpoint is still tried (one delivery at a time).
// Its deliveries are parked while it fails, and once it answers again every one of them arrives,
// each object's events in order.
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

eachDialect(
  'an endpoint that fails and answers again',
  (ctx) => {
    let r: TestReceiver;
    let dispatcher: Dispatcher;
    before(async () => {
      r = await startReceiver();
      r.status = 500;
      const t = ctx();
      dispatcher = startWebhookDispatcher({ db: t.deps.db, logger: t.deps.logger, webhooks: t.config.webhooks });
    });
    after(async () => {
      await dispatcher.stop();
      await r.stop();
    });

    test('has its deliveries parked while it fails, then gets every one, each object in order', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const { id: sub } = await addWebhook(operatorCtx(t.deps.db.kysely, s.workspaceId), { url: r.url, events: 'all', allowPrivate: true });
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: `A ${i}` } })).json().id);
      const db = t.deps.db.kysely;
      const failing = async () =>
        (await db.selectFrom('webhook_subscriptions').select('failing_since').where('id', '=', sub).executeTakeFirstOrThrow()).failing_since;
      await eventually('the endpoint fails', async () => (await failing()) !== null, 10_000);
      // Queued while it fails: parked from the start, out of the claim's walk.
      const before = new Set((await db.selectFrom('events').select('id').execute()).map((e) => e.id));
      for (const id of ids.slice(0, 6)) for (const n of [1, 2]) await call(t, s.secret, 'POST', `/v1/accounts/${id}`, { fields: { $name: `U ${id} ${n}` } });
      const queued = (await db.selectFrom('webhook_deliveries').select(['event_id', 'parked']).where('subscription_id', '=', sub).execute()).filter(
        (d) => !before.has(d.event_id),
      );
      assert.equal(queued.length, 12);
      assert.deepEqual(
        queued.filter((d) => d.parked !== 1),
        [],
      );
      const events = await db.selectFrom('events').select(['id', 'object_id']).where('workspace_id', '=', s.workspaceId).orderBy('seq').execute();
      const from = r.received.length;
      r.status = 204;
      await eventually(
        'every event arrives',
        async () => (await db.selectFrom('webhook_deliveries').select('id').where('subscription_id', '=', sub).execute()).length === 0,
        30_000,
      );
      const after = r.received.slice(from).map((x) => x.headers['webhook-id']!);
      const firsts = after.filter((id, i) => after.indexOf(id) === i);
      assert.deepEqual(new Set(firsts), new Set(events.map((e) => e.id)));
      for (const object of new Set(events.map((e) => e.object_id))) {
        const own = new Set(events.filter((e) => e.object_id === object).map((e) => e.id));
        assert.deepEqual(
          firsts.filter((id) => own.has(id)),
          [...own],
          `the events of ${object} arrive in order`,
        );
      }
    });
  },
  { env: ENV },
);
