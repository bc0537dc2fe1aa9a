// Webhook delivery across real server processes sharing one database, on both databases: two
// instances deliver every event exactly once, each object's events in order; a server SIGKILLed
// while the endpoint holds a delivery unanswered leaves it to another instance after the lease,
// which sends it again with the same webhook-id and a valid signature (at least once).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createKey } from '../../src/auth/service.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { addWebhook } from '../../src/webhooks/service.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, testDialects, type TestDb } from '../helpers/db.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { eventually } from '../helpers/smtp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

// Short, so that the crash test's re-delivery comes soon; long enough that a delivery on a machine
// starved of CPU is settled within its lease (one that is not may be sent again: at least once).
const LEASE_MS = 4000;

async function api(base: string, secret: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as any };
}

for (const dialect of testDialects()) {
  describe(`webhook delivery across processes [${dialect}]`, () => {
    let tdb: TestDb;
    let receiver: TestReceiver;
    let secret: string;
    let signing: string;
    let workspaceId: string;
    let env: Record<string, string>;
    const servers: ServerProcess[] = [];
    const start = async () => {
      const s = await startServerProcess(env);
      servers.push(s);
      return s;
    };

    before(async () => {
      tdb = await createTestDb(dialect);
      receiver = await startReceiver();
      const db = tdb.db.kysely;
      const ws = await createWorkspace(systemCtx(db), { name: 'hooks' });
      workspaceId = ws.id;
      secret = (await createKey(operatorCtx(db, ws.id), { userId: null, scopes: null, expiresInMs: null })).secret;
      signing = (await addWebhook(operatorCtx(db, ws.id), { url: receiver.url, events: 'all', allowPrivate: true })).secret;
      env = {
        DATA_DIR: tdb.dataDir,
        SIGNING_SECRET: 's'.repeat(40),
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_POLL_MS: '20',
        WEBHOOK_LEASE_MS: String(LEASE_MS),
        WEBHOOK_RETRY_BASE_MS: '100',
        WEBHOOK_RETRY_MAX_MS: '300',
        EMAIL_DISPATCH: 'false',
        RATE_LIMIT_WRITE: '0',
        RATE_LIMIT_SEARCH: '0',
        RATE_LIMIT_READ: '0',
        ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
      };
    });
    after(async () => {
      for (const s of servers) await s.stop('SIGKILL');
      await receiver.stop();
      await tdb.drop();
    });

    const stored = async () =>
      (await tdb.db.kysely.selectFrom('events').select(['id', 'object_id', 'seq']).where('workspace_id', '=', workspaceId).orderBy('seq').execute()).map(
        (e) => ({
          ...e,
          seq: Number(e.seq),
        }),
      );

    const outbox = async () => (await tdb.db.kysely.selectFrom('webhook_deliveries').select('id').execute()).length;

    test('two instances deliver every event exactly once, each object in order', async () => {
      receiver.received.length = 0;
      const [a, b] = [await start(), await start()];
      const ids = await Promise.all(
        Array.from(
          { length: 20 },
          async (_, i) => (await api((i % 2 ? a : b).baseUrl, secret, 'POST', '/v1/accounts', { fields: { $name: `n${i}` } })).json.id as string,
        ),
      );
      for (let round = 1; round <= 3; round++)
        await Promise.all(
          ids.map((id, i) => api(((i + round) % 2 ? a : b).baseUrl, secret, 'POST', `/v1/accounts/${id}`, { fields: { $name: `n${i} r${round}` } })),
        );
      const events = await stored();
      assert.equal(events.length, 80);
      await eventually('all delivered', () => new Set(receiver.ids()).size >= events.length, 30_000);
      // A copy comes only from a row of the outbox or from a round under way: once the outbox is
      // empty and both servers have stopped (a stop lets the round under way finish), none can
      // come, and what the receiver holds is final.
      await eventually('the outbox emptied', async () => (await outbox()) === 0, 30_000);
      await Promise.all([a.stop(), b.stop()]);
      const got = receiver.ids();
      assert.equal(got.length, events.length, 'each event exactly once');
      assert.deepEqual([...got].sort(), events.map((e) => e.id).sort());
      for (const x of receiver.received) new Webhook(signing).verify(x.body, x.headers);
      // Per object, the order received is the order written.
      const position = new Map(got.map((id, i) => [id, i]));
      for (const id of ids) {
        const mine = events.filter((e) => e.object_id === id).map((e) => position.get(e.id)!);
        assert.deepEqual(
          mine,
          [...mine].sort((x, y) => x - y),
          `events of ${id} out of order`,
        );
      }
      assert.equal((await tdb.db.kysely.selectFrom('webhook_deliveries').selectAll().execute()).length, 0);
    });

    test('SIGKILL while the endpoint holds a delivery: sent again after the lease with the same webhook-id', async () => {
      receiver.received.length = 0;
      receiver.hold = true;
      const held = new Promise<void>((resolve) => (receiver.onHold = resolve));
      const first = await start();
      const con = await api(first.baseUrl, secret, 'POST', '/v1/contacts', { fields: { $email: ['held@x.test'] } });
      assert.equal(con.status, 200);
      await held;
      await first.stop('SIGKILL');
      receiver.hold = false;
      receiver.onHold = null;
      const attempt = receiver.held[receiver.held.length - 1]!;
      assert.equal(JSON.parse(attempt.body).data.object.id, con.json.id);
      const second = await start();
      await eventually('delivered after the restart', () => receiver.received.length >= 1, 30_000);
      // As above: the outbox empty and the server stopped, no copy can come after this.
      await eventually('the outbox emptied', async () => (await outbox()) === 0, 30_000);
      await second.stop();
      assert.equal(receiver.received.length, 1);
      const again = receiver.received[0]!;
      assert.equal(again.headers['webhook-id'], attempt.headers['webhook-id']);
      assert.equal(again.body, attempt.body);
      new Webhook(signing).verify(again.body, again.headers);
    });
  });
}
