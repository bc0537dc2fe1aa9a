// Delivery across real server processes sharing one database, on both databases: a server
// SIGKILLed while it delivers (the SMTP server holds the message unanswered) or right after the
// commit (the SMTP server down) — the mail is delivered exactly once after a restart; two
// instances dispatching the same outbox deliver every message exactly once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/auth/service.ts';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { messageIdOf } from '../../src/jobs/mail-dispatcher.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, testDialects, type TestDb } from '../helpers/db.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { eventually, startTestSmtp, type TestSmtp } from '../helpers/smtp.ts';

const FROM = 'ann@acme.test';
// Short, so that a re-delivery after a crash comes soon; long enough that a delivery on a machine
// starved of CPU is settled within its lease (one that is not may be sent again: at least once).
const LEASE_MS = 4000;

async function api(base: string, secret: string, method: string, path: string, body?: unknown, extra: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${secret}`,
      'service-version': '2026-03-01',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...extra,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as any };
}

for (const dialect of testDialects()) {
  describe(`e-mail delivery across processes [${dialect}]`, () => {
    let tdb: TestDb;
    let smtp: TestSmtp;
    let secret: string;
    let env: Record<string, string>;
    const servers: ServerProcess[] = [];
    const start = async () => {
      const s = await startServerProcess(env);
      servers.push(s);
      return s;
    };

    before(async () => {
      tdb = await createTestDb(dialect);
      smtp = await startTestSmtp();
      const db = tdb.db.kysely;
      const ws = await createWorkspace(systemCtx(db), { name: 'delivery' });
      const objects = [
        { object: 'user', externalId: 'u-ann', email: FROM, firstName: 'Ann', role: 'member' },
        { object: 'mailbox', externalId: 'mb-ann', user: 'u-ann', address: FROM },
      ];
      const imported = await runImport(operatorCtx(db, ws.id), { kinds: importKinds(), text: objects.map((o) => JSON.stringify(o)).join('\n') });
      secret = (await createKey(operatorCtx(db, ws.id), { userId: imported.ids.user?.['u-ann'] as string, scopes: null, expiresInMs: null })).secret;
      env = {
        DATA_DIR: tdb.dataDir,
        SIGNING_SECRET: 's'.repeat(40),
        SMTP_URL: smtp.url,
        EMAIL_POLL_MS: '50',
        EMAIL_LEASE_MS: String(LEASE_MS),
        EMAIL_RETRY_BASE_MS: '100',
        EMAIL_RETRY_MAX_MS: '300',
        RATE_LIMIT_WRITE: '0',
        RATE_LIMIT_SEARCH: '0',
        RATE_LIMIT_READ: '0',
        ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
      };
    });
    after(async () => {
      for (const s of servers) await s.stop('SIGKILL');
      await smtp.stop();
      await tdb.drop();
    });

    /** Sends through `base`; returns the Message-ID the e-mail is delivered under. */
    // As a client does: a 503 (a machine starved of CPU past a request's deadline) is sent again
    // with the same Idempotency-Key, which makes it one e-mail whatever the first attempt did.
    async function send(base: string, subject: string): Promise<{ id: string; messageId: string }> {
      const body = { from: FROM, to: ['carol@example.test'], subject, messageBody: { content: `<p>${subject}</p>` } };
      const key = `send-${subject}`;
      let res = await api(base, secret, 'POST', '/v1/emails/send', body, { 'idempotency-key': key });
      for (let retry = 0; retry < 3 && res.status === 503; retry++) {
        await new Promise((r) => setTimeout(r, 500));
        res = await api(base, secret, 'POST', '/v1/emails/send', body, { 'idempotency-key': key });
      }
      assert.equal(res.status, 200, JSON.stringify(res.json));
      const row = await tdb.db.kysely.selectFrom('emails').select('id').where('subject', '=', subject).executeTakeFirstOrThrow();
      return { id: row.id, messageId: messageIdOf(row.id, FROM) };
    }

    const status = async (id: string) => (await tdb.db.kysely.selectFrom('emails').selectAll().where('id', '=', id).executeTakeFirstOrThrow()).delivery_status;
    const copies = (messageId: string) => smtp.byMessageId(messageId).length;
    // A copy comes only from a row of the outbox or from a round under way: once the outbox is
    // empty and the servers have stopped (a stop lets the round under way finish), none can come,
    // and what the SMTP server holds is final.
    const settled = async (...servers: ServerProcess[]) => {
      await eventually('the outbox emptied', async () => (await tdb.db.kysely.selectFrom('email_outbox').select('email_id').execute()).length === 0, 30_000);
      await Promise.all(servers.map((s) => s.stop()));
    };

    test('SIGKILL while the SMTP server holds the message: delivered exactly once after a restart', async () => {
      smtp.hold = true;
      const held = new Promise<void>((resolve) => (smtp.onHold = resolve));
      const first = await start();
      const { id, messageId } = await send(first.baseUrl, 'killed mid-delivery');
      await held;
      await first.stop('SIGKILL');
      smtp.hold = false;
      smtp.onHold = null;
      assert.equal(copies(messageId), 0, 'the held message was never accepted');
      const second = await start();
      await eventually('delivered after the restart', () => copies(messageId) === 1, 30_000);
      await eventually('recorded as sent', async () => (await status(id)) === 'sent');
      await settled(second);
      assert.equal(copies(messageId), 1);
    });

    test('SIGKILL right after the commit, with the SMTP server down: delivered exactly once after a restart', async () => {
      await smtp.stop();
      const first = await start();
      const { id, messageId } = await send(first.baseUrl, 'killed after commit');
      await first.stop('SIGKILL');
      await smtp.start();
      const second = await start();
      await eventually('delivered after the restart', () => copies(messageId) === 1, 30_000).catch(async (err: Error) => {
        // Where the mail stands, so that a failure says whether it was given up, leased or waiting.
        const outbox = await tdb.db.kysely.selectFrom('email_outbox').selectAll().where('email_id', '=', id).executeTakeFirst();
        throw new Error(`${err.message}; e-mail ${await status(id)}, outbox ${JSON.stringify(outbox ?? null)}, now ${new Date().toISOString()}`);
      });
      await eventually('recorded as sent', async () => (await status(id)) === 'sent');
      await settled(second);
      assert.equal(copies(messageId), 1);
    });

    test('two instances on one outbox deliver every message exactly once', async () => {
      const [a, b] = [await start(), await start()];
      const sent = await Promise.all(Array.from({ length: 24 }, (_, i) => send((i % 2 ? a : b).baseUrl, `pair ${i}`)));
      await eventually('all delivered', () => sent.every((s) => copies(s.messageId) >= 1), 30_000);
      await eventually('all recorded', async () => (await Promise.all(sent.map((s) => status(s.id)))).every((x) => x === 'sent'));
      await settled(a, b);
      assert.deepEqual(
        sent.map((s) => copies(s.messageId)),
        sent.map(() => 1),
      );
      assert.equal((await tdb.db.kysely.selectFrom('email_outbox').selectAll().execute()).length, 0);
    });
  });
}
