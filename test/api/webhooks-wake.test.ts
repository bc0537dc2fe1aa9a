// A committed write wakes its own process's webhook dispatcher (docs/events.md §Delivery), on both
// databases: with a poll interval of a minute, a contact created through the API reaches the
// endpoint within seconds, without waiting for the dispatcher's next poll.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Dispatcher, startWebhookDispatcher } from '../../src/jobs/webhook-dispatcher.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { addWebhook } from '../../src/webhooks/service.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { eventually } from '../helpers/smtp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

eachDialect(
  'webhook dispatcher woken by a commit',
  (ctx) => {
    let receiver: TestReceiver;
    before(async () => {
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.stop();
    });

    test('a create is delivered at once while the dispatcher sleeps out a poll of 60 s', async () => {
      const t = ctx();
      assert.equal(t.config.webhooks.pollMs, 60_000);
      const s = await seedWorkspace(t);
      await addWebhook(operatorCtx(t.deps.db.kysely, s.workspaceId), { url: receiver.url, events: 'all', allowPrivate: true });
      // Stopped within the test, as a server stops its jobs before it closes its database: the
      // app's own teardown closes the database first.
      const dispatcher: Dispatcher = startWebhookDispatcher({ db: t.deps.db, logger: t.deps.logger, webhooks: t.config.webhooks });
      try {
        // Its first round finds the outbox empty; it then sleeps its poll interval.
        await new Promise((r) => setTimeout(r, 500));
        const started = Date.now();
        const c = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Prompt' } } })).json();
        await eventually('the create delivered', () => receiver.received.length === 1, 10_000);
        assert.equal((JSON.parse(receiver.received[0]!.body) as { data: { object: { id: string } } }).data.object.id, c.id);
        assert.ok(Date.now() - started < 10_000);
      } finally {
        await dispatcher.stop();
      }
    });
  },
  { env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '60000' } },
);
