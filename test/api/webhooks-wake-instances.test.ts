// A committed write wakes the webhook dispatcher of another instance sharing the database
// (docs/events.md §Delivery), on both databases: instance A takes the write and runs no
// dispatcher; instance B, with its own handle on the same database and a poll interval of a
// minute, delivers within seconds. On PostgreSQL B hears A's NOTIFY, also after its LISTEN
// connection was killed under it; on SQLite the handles of one file hear each other (the workers of
// a cluster through the primary: test/api/webhooks-wake-cluster.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openDb } from '../../src/db/database.ts';
import { listenName } from '../../src/db/postgres/signals.ts';
import type { Db } from '../../src/db/index.ts';
import { type Dispatcher, startWebhookDispatcher } from '../../src/jobs/webhook-dispatcher.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { addWebhook } from '../../src/webhooks/service.ts';
import { QUEUED } from '../../src/webhooks/repository.ts';
import { buildTestApp, call, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';
import { eventually } from '../helpers/smtp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

/** The backends LISTENing for B's wake: there is one once B's dispatcher listens. */
async function listeners(schema: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  try {
    const r = await c.query<{ pid: number }>('select pid from pg_stat_activity where query = $1', [`listen "${listenName(schema, QUEUED)}"`]);
    return r.rows.map((row) => row.pid);
  } finally {
    await c.end();
  }
}

async function terminate(pid: number): Promise<void> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  await c.query('select pg_terminate_backend($1)', [pid]);
  await c.end();
}

for (const dialect of testDialects()) {
  describe(`webhook dispatcher of another instance woken by a commit [${dialect}]`, () => {
    let receiver: TestReceiver;
    let t: TestApp;
    let s: Seeded;
    let b: Db;
    let dispatcher: Dispatcher;
    before(async () => {
      receiver = await startReceiver();
      t = await buildTestApp(dialect, { env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '60000' } });
      assert.equal(t.config.webhooks.pollMs, 60_000);
      s = await seedWorkspace(t);
      await addWebhook(operatorCtx(t.deps.db.kysely, s.workspaceId), { url: receiver.url, events: 'all', allowPrivate: true });
      b = openDb({
        dataDir: t.tdb.dataDir,
        ...(t.tdb.sqliteFile ? { sqliteFile: t.tdb.sqliteFile } : {}),
        ...(t.tdb.databaseUrl ? { databaseUrl: t.tdb.databaseUrl } : {}),
      });
      dispatcher = startWebhookDispatcher({ db: b, logger: t.deps.logger, webhooks: t.config.webhooks });
      // Its first round finds the outbox empty; it then sleeps its poll interval.
      await new Promise((r) => setTimeout(r, 500));
    });
    after(async () => {
      await dispatcher?.stop();
      await b?.close();
      await t?.close();
      await receiver.stop();
    });

    const createdAndDelivered = async (name: string) => {
      const before = receiver.received.length;
      const started = Date.now();
      const c = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: name } } })).json();
      await eventually(`${name} delivered by the other instance`, () => receiver.received.length === before + 1, 10_000);
      assert.equal((JSON.parse(receiver.received[before]!.body) as { data: { object: { id: string } } }).data.object.id, c.id);
      assert.ok(Date.now() - started < 10_000);
    };

    test('a create through A is delivered at once by B, whose dispatcher sleeps out a poll of 60 s', async () => {
      await createdAndDelivered('Across');
    });

    if (dialect === 'postgres')
      test('B listens again once its LISTEN connection was killed, and still hears A', async () => {
        const schema = t.tdb.schema!;
        const [old] = await listeners(schema);
        assert.ok(old !== undefined, 'B listens');
        await terminate(old);
        await eventually('B listens on a new connection', async () => (await listeners(schema)).some((pid) => pid !== old), 10_000);
        // The LISTEN that took woke B once; it sleeps again before A writes.
        await new Promise((r) => setTimeout(r, 500));
        await createdAndDelivered('Again');
      });
  });
}
