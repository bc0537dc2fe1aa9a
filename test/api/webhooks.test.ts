// Outbound webhooks (docs/events.md) on both databases: `rolodex webhook add|list|remove|test|
// replay`; deliveries signed per Standard Webhooks (verified here with the standardwebhooks
// package, as a receiver would), each object's events in order, only the types subscribed to,
// nothing for a write that changed nothing or failed; a failing endpoint is retried and disabled
// after WEBHOOK_DISABLE_AFTER_MS; private targets need WEBHOOK_ALLOW_PRIVATE; old events are
// swept after EVENT_RETENTION_DAYS.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { eventTypes, MERGEABLE_TYPES } from '../../src/changes/event-types.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { filesEnv } from '../../src/files/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { type Dispatcher, startWebhookDispatcher } from '../../src/jobs/webhook-dispatcher.ts';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { isSpecialAddress } from '../../src/lib/public-address.ts';
import { RECORD_TYPES } from '../../src/records/resource.ts';
import { deliver } from '../../src/webhooks/sender.ts';
import { addWebhook, listWebhooks, removeWebhook } from '../../src/webhooks/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { eventually } from '../helpers/smtp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '20',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_RETRY_MAX_MS: '100',
  WEBHOOK_DISABLE_AFTER_MS: '1000',
};

eachDialect(
  'webhooks',
  (ctx) => {
    let receiver: TestReceiver;
    let dispatcher: Dispatcher;
    before(async () => {
      receiver = await startReceiver();
      const t = ctx();
      dispatcher = startWebhookDispatcher({ db: t.deps.db, logger: t.deps.logger, webhooks: t.config.webhooks });
    });
    after(async () => {
      await dispatcher.stop();
      await receiver.stop();
    });

    async function rolodex(t: TestApp, extraEnv: Record<string, string>, ...args: string[]) {
      const stdout: string[] = [];
      const stderr: string[] = [];
      const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}), ...extraEnv };
      const io: Io = { out: (x) => stdout.push(x), err: (x) => stderr.push(x), env, isTty: false };
      const code = await main(args, io);
      return { code, out: stdout.join(''), err: stderr.join(''), json: () => JSON.parse(stdout.join('')) };
    }
    async function subscribe(s: Seeded, ...flags: string[]) {
      const r = await rolodex(ctx(), ENV, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, ...flags, '--json');
      assert.equal(r.code, 0, r.err);
      return r.json() as { id: string; secret: string };
    }
    // Set-up and clean-up call the service: a command opens the database afresh (a connection and
    // the migration check), a cost the tests of the commands pay and the rest need not.
    async function subscribed(t: TestApp, s: Seeded, events: string[] | 'all') {
      return addWebhook(operatorCtx(t.deps.db.kysely, s.workspaceId), { url: receiver.url, events, allowPrivate: true });
    }
    const unsubscribe = (t: TestApp, id: string) => removeWebhook(t.deps.db.kysely, { id });
    const outbox = async (t: TestApp) => (await t.deps.db.kysely.selectFrom('webhook_deliveries').select('id').execute()).length;
    const depth = async (t: TestApp) => {
      const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      return Number(/^rolodex_webhook_outbox_depth (\d+)$/m.exec(text)?.[1]);
    };
    const bodies = (subId?: string) =>
      receiver.received
        .filter((x) => subId === undefined || x.headers['x-sub'] === subId)
        .map((x) => JSON.parse(x.body) as { id: string; type: string; data: any });

    test('signed deliveries in order per record, only the types taken, nothing for a no-op or a failed write', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const all = await subscribe(s, '--all', '--description', 'everything');
      assert.match(all.secret, /^whsec_/);
      const some = await subscribe(s, '--events', 'account.created');
      receiver.received.length = 0;
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'v0' } })).json();
      for (let i = 1; i <= 5; i++) await call(t, s.secret, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: `v${i}` } });
      await call(t, s.secret, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: 'v5' } });
      assert.equal((await call(t, s.secret, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: 7 } })).statusCode, 400);
      await eventually('7 deliveries', () => receiver.received.length >= 7, 20_000);
      // Every delivery is queued by the write's own commit and leaves the outbox once the endpoint
      // has answered it: with the outbox empty, no further delivery can come.
      await eventually('the outbox emptied', async () => (await outbox(t)) === 0);
      assert.equal(receiver.received.length, 7);
      for (const x of receiver.received) {
        const body = JSON.parse(x.body) as { id: string };
        assert.equal(x.headers['webhook-id'], body.id);
        assert.match(x.headers['webhook-signature']!, /^v1,/);
        assert.equal(x.headers['content-type'], 'application/json');
        // Exactly one of the two secrets verifies it; which one names the subscription.
        const asAll = (() => {
          try {
            new Webhook(all.secret).verify(x.body, x.headers);
            return true;
          } catch {
            return false;
          }
        })();
        if (!asAll) new Webhook(some.secret).verify(x.body, x.headers);
        x.headers['x-sub'] = asAll ? all.id : some.id;
      }
      assert.deepEqual(
        bodies(all.id).map((b) => (b.type === 'account.created' ? 'created' : b.data.object.fields.$name.value)),
        ['created', 'v1', 'v2', 'v3', 'v4', 'v5'],
      );
      assert.deepEqual(
        bodies(some.id).map((b) => b.type),
        ['account.created'],
      );
      // The same event under both subscriptions carries the same webhook-id.
      assert.equal(bodies(some.id)[0]!.id, bodies(all.id)[0]!.id);
      assert.equal((await t.deps.db.kysely.selectFrom('webhook_deliveries').selectAll().execute()).length, 0);

      const list = await rolodex(t, ENV, 'webhook', 'list', '--workspace', s.workspaceId, '--json');
      assert.deepEqual(
        list.json().map((w: any) => [w.id, w.status, w.events]),
        [
          [all.id, 'active', 'all'],
          [some.id, 'active', ['account.created']],
        ],
      );
      assert.ok(!list.out.includes(all.secret), 'list never shows a secret');
      const test1 = await rolodex(t, ENV, 'webhook', 'test', all.id, '--json');
      assert.equal(test1.code, 0, test1.err);
      const last = receiver.received[receiver.received.length - 1]!;
      assert.equal(JSON.parse(last.body).type, 'webhook.test');
      new Webhook(all.secret).verify(last.body, last.headers);
      for (const id of [all.id, some.id]) assert.equal((await rolodex(t, ENV, 'webhook', 'remove', id)).code, 0);
    });

    test('a failing endpoint is retried with the same webhook-id, disabled after the limit, and replay sends again', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const sub = await subscribed(t, s, ['contact.created', 'contact.updated']);
      receiver.received.length = 0;
      receiver.status = 500;
      const con = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['a@x.test'] } })).json();
      await eventually('tried several times', () => receiver.received.length >= 3);
      assert.equal(await depth(t), 1, 'the delivery waits in the outbox between attempts');
      assert.equal(new Set(receiver.ids()).size, 1, 'every attempt carries the same webhook-id');
      await eventually('disabled', async () => (await listWebhooks(t.deps.db.kysely, { workspaceId: s.workspaceId }))[0]!.status === 'disabled', 20_000).catch(
        (err: Error) => {
          // What the dispatcher said, and what the receiver got, say why when it does not happen.
          const said = t
            .logs()
            .split('\n')
            .filter((l) => /webhook/i.test(l))
            .slice(-15)
            .join('\n');
          throw new Error(`${err.message}; ${receiver.received.length} attempts received; the log:\n${said}`);
        },
      );
      // Watched through the service, one open database; the command then lists it as such.
      assert.equal((await rolodex(t, ENV, 'webhook', 'list', '--workspace', s.workspaceId, '--json')).json()[0].status, 'disabled');
      const shown = (await rolodex(t, ENV, 'webhook', 'list', '--workspace', s.workspaceId)).out;
      assert.match(shown, /disabled since .*last error HTTP 500/);
      assert.equal(await depth(t), 0);
      // Disabled: new events are not queued for it.
      await call(t, s.secret, 'POST', `/v1/contacts/${con.id}`, { fields: { $email: ['b@x.test'] } });
      assert.equal((await t.deps.db.kysely.selectFrom('webhook_deliveries').selectAll().execute()).length, 0);

      receiver.status = 200;
      receiver.received.length = 0;
      const replay = await rolodex(t, ENV, 'webhook', 'replay', sub.id, '--since', '2000-01-01T00:00:00Z', '--json');
      assert.equal(replay.json().queued, 2);
      await eventually('replayed', () => receiver.received.length >= 2);
      const types = bodies().map((b) => b.type);
      assert.deepEqual(types, ['contact.created', 'contact.updated']);
      assert.equal((await rolodex(t, ENV, 'webhook', 'list', '--workspace', s.workspaceId, '--json')).json()[0].status, 'active');
      await unsubscribe(t, sub.id);
    });

    test('a webhook test the endpoint refuses is a failed command: exit code 1, the reason on stderr', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const sub = await subscribed(t, s, 'all');
      receiver.status = 500;
      try {
        const human = await rolodex(t, ENV, 'webhook', 'test', sub.id);
        assert.equal(human.code, 1, human.out);
        assert.match(human.err, /^rolodex webhook: webhook\.test evt_\w+ failed: HTTP 500$/);
        assert.equal(human.out, '');
        const json = await rolodex(t, ENV, 'webhook', 'test', sub.id, '--json');
        assert.equal(json.code, 1, json.out);
        assert.deepEqual({ ...json.json(), eventId: 'evt' }, { ok: false, status: 500, error: 'HTTP 500', eventId: 'evt' });
      } finally {
        receiver.status = 200;
        assert.equal((await rolodex(t, ENV, 'webhook', 'remove', sub.id)).code, 0);
      }
    });

    test("one event an endpoint always refuses is given up after the limit; its object's later events then go", async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const sub = await subscribed(t, s, ['account.created', 'account.updated']);
      receiver.received.length = 0;
      receiver.statusFor = (body) => (body.includes('poison') && JSON.parse(body).type === 'account.created' ? 400 : 204);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'poison' } })).json();
      await call(t, s.secret, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: 'cured' } });
      // Other objects keep succeeding until then, so the endpoint itself is never disabled.
      const cured = () => bodies().some((b) => b.data.object.fields.$name.value === 'cured');
      const stop = Date.now() + 60_000;
      while (!cured() && Date.now() < stop) {
        await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'fine' } });
        await new Promise((r) => setTimeout(r, 150));
      }
      assert.ok(cured(), 'the later event of the object arrives');
      const ofAcc = receiver.received.filter((x) => JSON.parse(x.body).data.object.id === acc.id).map((x) => JSON.parse(x.body).type);
      assert.ok(ofAcc.filter((x) => x === 'account.created').length >= 2, 'the refused event was tried again');
      assert.equal(ofAcc[ofAcc.length - 1], 'account.updated');
      assert.equal((await rolodex(t, ENV, 'webhook', 'list', '--workspace', s.workspaceId, '--json')).json()[0].status, 'active');
      receiver.statusFor = null;
      await unsubscribe(t, sub.id);
    });

    test('private and loopback targets need WEBHOOK_ALLOW_PRIVATE; bad input is refused', async () => {
      const t = ctx();
      receiver.status = 200;
      const s = await seedWorkspace(t);
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://[::1]/x',
        'http://10.1.2.3/x',
        'http://169.254.169.254/latest',
        'http://[64:ff9b:1::a00:1]/x',
        'http://[3fff::1]/x',
        'http://192.88.99.1/x',
        'http://[5f00::1]/x',
      ]) {
        const r = await rolodex(t, { WEBHOOK_ALLOW_PRIVATE: 'false' }, 'webhook', 'add', '--workspace', s.workspaceId, '--url', url, '--all');
        assert.equal(r.code, 1, url);
        assert.match(r.err, /WEBHOOK_ALLOW_PRIVATE/);
      }
      for (const a of ['127.0.0.1', '10.0.0.1', '192.168.1.1', '172.20.0.1', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '0.0.0.0', '100.64.0.1'])
        assert.equal(isSpecialAddress(a), true, a);
      for (const a of ['93.184.216.34', '2606:2800:220:1::1', '8.8.8.8']) assert.equal(isSpecialAddress(a), false, a);
      // A name is checked on the addresses the connection is made to, after DNS resolution.
      const name = hostname();
      if ((await lookup(name, { all: true })).every((a) => isSpecialAddress(a.address))) {
        const url = receiver.url.replace('127.0.0.1', name);
        const send = (allowPrivate: boolean) =>
          deliver({ url, secret: `whsec_${'A'.repeat(44)}`, eventId: 'evt_x', body: '{}', timeoutMs: 5000, allowPrivate });
        assert.deepEqual(await send(false), { ok: false, error: 'PRIVATE_TARGET' });
        assert.equal((await send(true)).ok, true);
      }
      // Only types that exist (docs/events.md §Types): a list's, an e-mail's, a file's and a run's own actions are theirs alone.
      for (const type of ['contact.exploded', 'contact.completed', 'file.sent', 'account.members_added', 'email.completed']) {
        const bad = await rolodex(t, ENV, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, '--events', type);
        assert.equal(bad.code, 1, `${type} is refused: ${bad.out}`);
        assert.match(bad.err, /is not an event type/);
      }
      const run = await rolodex(t, ENV, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, '--events', 'enrichment_run.completed');
      assert.equal(run.code, 0, run.err);
      // An action of a type the workspace does not have would never be written: a plural, a custom
      // object type not defined (yet), a kind of object with no events.
      for (const type of ['contacts.created', 'project.created', 'user.updated']) {
        const bad = await rolodex(t, ENV, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, '--events', `account.created,${type}`);
        assert.equal(bad.code, 1, `${type} is refused: ${bad.out}`);
        assert.match(bad.err, new RegExp(`"${type.replace('.', '\\.')}" is not an event type: the workspace has no type`));
      }
      await defineObjectType(operatorCtx(t.deps.db.kysely, s.workspaceId), { slug: 'project', label: 'Project' });
      const types = 'project.created,project.merged,note.updated,meeting.deleted,list.restored,opportunity.merged';
      const custom = await rolodex(t, ENV, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, '--events', types, '--json');
      assert.equal(custom.code, 0, custom.err);
      assert.deepEqual([...custom.json().events].sort(), types.split(',').sort());
      // The subscriptions of this test are not left to the next.
      for (const w of await listWebhooks(t.deps.db.kysely, { workspaceId: s.workspaceId })) await unsubscribe(t, w.id);
      // A URL pasted with white space around it or a line break in it is kept as it is called.
      const pasted = await rolodex(
        t,
        ENV,
        'webhook',
        'add',
        '--workspace',
        s.workspaceId,
        '--url',
        ` ${receiver.url.replace('/hooks', '/ho\nok\ts')}\n`,
        '--all',
        '--json',
      );
      assert.equal(pasted.code, 0, pasted.err);
      assert.equal(pasted.json().url, receiver.url);
      const listed = await rolodex(t, ENV, 'webhook', 'list', '--workspace', s.workspaceId);
      assert.ok(
        listed.out.split('\n').some((l) => l.startsWith(`${pasted.json().id}  ${receiver.url}  `)),
        listed.out,
      );
      await unsubscribe(t, pasted.json().id);
      const none = await rolodex(t, ENV, 'webhook', 'add', '--workspace', s.workspaceId, '--url', 'ftp://x.test/');
      assert.equal(none.code, 1);
      // A workspace that does not exist is refused by list too, as by add, never answered with no webhooks.
      const elsewhere = await rolodex(t, ENV, 'webhook', 'list', '--workspace', 'ws_nope');
      assert.equal(elsewhere.code, 1, elsewhere.out);
      assert.match(elsewhere.err, /no workspace "ws_nope"/);
    });

    test('a type no event is written with is refused, naming it and every type taken; --all still takes them all', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await defineObjectType(operatorCtx(t.deps.db.kysely, s.workspaceId), { slug: 'project', label: 'Project' });
      // docs/events.md §Types: tasks, notes, meetings and lists are never merged; an e-mail is only
      // sent, a file only completed; webhook.test goes to the webhook tested, subscribed or not.
      const never = ['task.merged', 'note.merged', 'meeting.merged', 'list.merged', 'email.created', 'file.deleted', 'enrichment_run.updated', 'webhook.test'];
      for (const type of never) {
        const bad = await rolodex(t, ENV, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, '--events', `account.created,${type}`);
        assert.equal(bad.code, 1, `${type} is refused: ${bad.out}`);
        assert.equal(bad.out, '', type);
        const [first, ...rest] = bad.err.trim().split('\n');
        assert.equal(rest.length, 0, bad.err);
        assert.ok(first!.includes(`"${type}" is not an event type: `), first);
        const listed = /The event types of this workspace: ([^(]+) \(docs\/events\.md §Types\)$/.exec(first!)?.[1]?.split(', ');
        assert.deepEqual(listed, eventTypes(['project']), first);
        assert.ok(!listed.includes(type), type);
      }
      const task = await rolodex(t, ENV, 'webhook', 'add', '--workspace', s.workspaceId, '--url', receiver.url, '--events', 'task.merged');
      assert.match(task.err, /no task event is "merged" \(those of task are task\.created, task\.updated, task\.deleted, task\.restored\)/);
      assert.deepEqual((await rolodex(t, ENV, 'webhook', 'list', '--workspace', s.workspaceId, '--json')).json(), [], 'nothing was added');
      // Every listed type is taken, a custom type's merges among them; --all takes them all.
      const every = await subscribe(s, '--events', eventTypes(['project']).join(','));
      const all = await subscribe(s, '--all');
      for (const w of [every, all]) assert.equal((await rolodex(t, ENV, 'webhook', 'remove', w.id)).code, 0);
    });

    test('the types a subscription may take are those written: every merge route is of a mergeable type', async () => {
      const t = ctx();
      const PLURALS = Object.fromEntries(Object.values(RECORD_TYPES).map((r) => [r.objectType, r.plural]));
      const types = eventTypes([]);
      assert.deepEqual(
        types.filter((x) => x.endsWith('.merged')),
        MERGEABLE_TYPES.map((x) => `${x}.merged`),
      );
      for (const kind of Object.keys(RECORD_TYPES)) assert.ok(types.includes(`${kind}.created`), kind);
      for (const [type, plural] of Object.entries({ ...PLURALS, meeting: 'meetings', list: 'lists' }))
        assert.equal(t.app.hasRoute({ method: 'POST', url: `/v1/${plural}/merge` }), types.includes(`${type}.merged`), type);
      assert.ok(t.app.hasRoute({ method: 'POST', url: '/v1/objects/:entitySlug/merge' }));
      assert.ok(eventTypes(['project']).includes('project.merged'));
    });

    test('replay --since takes a date-time with a time zone (docs/errors.md §Dates); another form is refused, nothing queued', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const sub = await subscribed(t, s, ['account.created']);
      receiver.received.length = 0;
      await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'kept' } });
      await eventually('delivered', () => receiver.received.length >= 1);
      // The dispatcher removes the delivered row once the endpoint's answer is in, after the
      // receiver has the event: the outbox is empty before the refusals, so that any row after
      // them is one they queued.
      const outbox = () => t.deps.db.kysely.selectFrom('webhook_deliveries').selectAll().execute();
      await eventually('the delivered row removed', async () => (await outbox()).length === 0);
      // Forms Date.parse reads as another instant than the one meant (the year 2001, March 2, local
      // time) or at all: each would replay a span nobody asked for.
      for (const since of ['March 1', '1', '12/31/2025', '2026-02-30T00:00:00Z', '2026-03-01T00:00:00', '2026-03-01', 'soon']) {
        const r = await rolodex(t, ENV, 'webhook', 'replay', sub.id, '--since', since);
        assert.equal(r.code, 2, `${since}: ${r.out}`);
        assert.equal(
          r.err.split('\n')[0],
          `rolodex webhook: --since must be a date-time with a time zone, ISO 8601 such as 2026-03-01T00:00:00Z (got "${since}")`,
        );
      }
      assert.equal((await outbox()).length, 0);
      const later = await rolodex(t, ENV, 'webhook', 'replay', sub.id, '--since', '9999-01-01T00:00:00+01:00', '--json');
      assert.equal(later.json().queued, 0);
      const all = await rolodex(t, ENV, 'webhook', 'replay', sub.id, '--since', '2000-01-01t00:00:00.5z', '--json');
      assert.equal(all.json().queued, 1);
      await eventually('replayed', () => receiver.received.length >= 2);
      await unsubscribe(t, sub.id);
    });

    test('events older than EVENT_RETENTION_DAYS are swept', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'old' } });
      await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'new' } });
      const db = t.deps.db.kysely;
      const [first] = await db.selectFrom('events').select('id').where('workspace_id', '=', s.workspaceId).orderBy('seq').execute();
      // Events are appended in time order (docs/events.md §Storage): the log up to this one is old.
      const { seq } = await db.selectFrom('events').select('seq').where('id', '=', first!.id).executeTakeFirstOrThrow();
      await db.updateTable('events').set({ occurred_at: '2000-01-01T00:00:00.000Z' }).where('seq', '<=', seq).execute();
      const r = await sweepOnce({ db, now: Date.now(), files: filesEnv(t.config, t.deps.blobs) }, { eventRetentionDays: 30 });
      assert.ok(r.eventsPurged >= 1);
      const left = await db.selectFrom('events').select('id').where('workspace_id', '=', s.workspaceId).execute();
      assert.equal(left.length, 1);
    });
  },
  { env: ENV },
);
