// A busy endpoint and another workspace's (docs/events.md §Delivery), on both databases: an
// endpoint with a backlog larger than a claim takes, answering each attempt well within
// WEBHOOK_POLL_MS (so never slow), holds up another endpoint's events for about one round, not
// for its backlog. Before, a claim took the oldest due rows, every one the busy endpoint's, until
// its backlog had shrunk below a claim: the other endpoint waited for the whole backlog.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { type Dispatcher, startWebhookDispatcher } from '../../src/jobs/webhook-dispatcher.ts';
import { addWebhook } from '../../src/webhooks/service.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { eventually } from '../helpers/smtp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

const BUSY_MS = 300;
const BACKLOG = 200;
const CONCURRENCY = 2;
/** The longest round behind the busy endpoint: a claim's rows, CONCURRENCY at a time. */
const ROUND_MS = ((CONCURRENCY * 8) / CONCURRENCY) * BUSY_MS;

eachDialect(
  'a busy endpoint',
  (ctx) => {
    let busy: TestReceiver;
    let other: TestReceiver;
    let dispatcher: Dispatcher | undefined;
    before(async () => {
      [busy, other] = [await startReceiver(), await startReceiver()];
      busy.delayMs = BUSY_MS;
    });
    after(async () => {
      await dispatcher?.stop();
      await busy.stop();
      await other.stop();
    });

    test(`holds up another workspace's endpoint for about one round, not for its backlog of ${BACKLOG}`, async () => {
      const t = ctx();
      const [x, y] = [await seedWorkspace(t), await seedWorkspace(t)];
      await addWebhook(operatorCtx(t.deps.db.kysely, x.workspaceId), { url: busy.url, events: 'all', allowPrivate: true });
      await addWebhook(operatorCtx(t.deps.db.kysely, y.workspaceId), { url: other.url, events: 'all', allowPrivate: true });
      for (let i = 0; i < BACKLOG; i++) await call(t, x.secret, 'POST', '/v1/accounts', { fields: { $name: `x${i}` } });
      await call(t, y.secret, 'POST', '/v1/accounts', { fields: { $name: 'y0' } });

      // The other endpoint's event is newer than the whole backlog, and the first claim takes it.
      let started = Date.now();
      dispatcher = startWebhookDispatcher({ db: t.deps.db, logger: t.deps.logger, webhooks: t.config.webhooks });
      await eventually('the other endpoint is sent its first event', () => other.received.length === 1, 10_000);
      let waited = Date.now() - started;
      // Worked after the busy endpoint's rows of the claim, it waited for 8 of its attempts.
      assert.ok(waited < 3 * BUSY_MS, `the other endpoint waited ${waited} ms behind a backlog of ${BACKLOG}`);

      // An event written while the backlog is being worked is in the claim after the round's.
      await eventually('the busy endpoint is being worked', () => busy.received.length >= 4, 10_000);
      started = Date.now();
      await call(t, y.secret, 'POST', '/v1/accounts', { fields: { $name: 'y1' } });
      await eventually('the other endpoint is sent its second event', () => other.received.length === 2, 15_000);
      waited = Date.now() - started;
      assert.ok(waited < ROUND_MS + 3 * BUSY_MS, `the other endpoint waited ${waited} ms behind a backlog of ${BACKLOG}`);

      const left = await t.deps.db.kysely.selectFrom('webhook_deliveries').select('id').execute();
      assert.ok(left.length > 0 && left.length < BACKLOG, `the busy endpoint's backlog is worked meanwhile (${left.length} left)`);
      assert.equal(new Set(busy.ids()).size, busy.received.length, 'no event is sent twice');
    });
  },
  { env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: String(CONCURRENCY), WEBHOOK_POLL_MS: '500', WEBHOOK_TIMEOUT_MS: '5000' } },
);
