// A removed mailbox sends nothing more (docs/emails.md §Mailboxes, §Delivery), on both databases:
// mail it queued and the dispatcher had not delivered (never tried, or waiting for a retry after
// a 4xx) is never sent once the removal commits, by `rolodex mailbox remove` or by an import line
// with `removedAt`; it fails for good as MAILBOX_REMOVED, recorded on the e-mail and in /metrics.
// A mailbox brought back by a re-import before its mail was settled sends that mail.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { messageIdOf, startMailDispatcher } from '../../src/jobs/mail-dispatcher.ts';
import { systemCtx } from '../../src/lib/context.ts';
import { MailError, type MailTransport, type OutgoingMail } from '../../src/mail/transport.ts';
import { removeMailbox } from '../../src/mailboxes/service.ts';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { type EmailWorld, metric, importInto, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { eventually } from '../helpers/smtp.ts';

/** Records each message it is handed; `before` runs first and may refuse it by throwing. */
function recorder(sent: string[], before: (mail: OutgoingMail) => Promise<void> = async () => {}): MailTransport {
  return {
    kind: 'smtp',
    async send(mail) {
      await before(mail);
      sent.push(mail.messageId);
    },
    async close() {},
  };
}

async function sendOne(t: TestApp, w: EmailWorld, from: string, subject: string): Promise<string> {
  const key = from === w.addresses.bob ? w.keys.bob : w.keys.ann;
  assert.equal((await call(t, key, 'POST', '/v1/emails/send', sendBody(from, { subject }))).statusCode, 200);
  return (await t.deps.db.kysely.selectFrom('emails').select('id').where('subject', '=', subject).executeTakeFirstOrThrow()).id;
}

async function emailRow(t: TestApp, id: string) {
  return t.deps.db.kysely
    .selectFrom('emails')
    .select(['delivery_status', 'delivery_attempts', 'delivery_error', 'delivered_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

const outboxEmpty = (t: TestApp) => async () => (await t.deps.db.kysely.selectFrom('email_outbox').select('email_id').execute()).length === 0;

eachDialect(
  'e-mails of a removed mailbox',
  (ctx) => {
    /** A dispatcher stopped when test `tc` ends, failed or not. */
    function start(tc: TestContext, t: TestApp, transport: MailTransport): void {
      const dispatcher = startMailDispatcher({
        db: t.deps.db,
        blobs: t.deps.blobs,
        transport,
        logger: t.deps.logger,
        metrics: t.deps.metrics,
        mail: t.config.mail,
      });
      tc.after(() => dispatcher.stop());
    }

    test('mail queued from a mailbox removed before delivery (queued, or waiting for a retry) is never sent: it fails for good as MAILBOX_REMOVED', async (tc) => {
      const t = ctx();
      const w = await seedEmailWorld(t);
      const full = await sendOne(t, w, w.addresses.full, `removed by the CLI ${w.tag}`);
      const meta = await sendOne(t, w, w.addresses.meta, `removed by an import ${w.tag}`);
      const retried = await sendOne(t, w, w.addresses.bob, `retried after a 4xx ${w.tag}`);
      await removeMailbox(systemCtx(t.deps.db.kysely), { id: w.mailboxes.full });
      await importInto(t, w.workspaceId, [
        { object: 'mailbox', externalId: 'mb-meta', user: 'u-ann', address: w.addresses.meta, othersSee: 'METADATA', removedAt: new Date().toISOString() },
      ]);
      const finalBefore = await metric(t, 'rolodex_email_delivery_failures_total{transport="smtp",final="true"}');
      const sent: string[] = [];
      // bob's mailbox is removed while its first attempt is under way, which the server refuses for now.
      let refused = false;
      start(
        tc,
        t,
        recorder(sent, async (mail) => {
          if (mail.emailId !== retried || refused) return;
          refused = true;
          await removeMailbox(systemCtx(t.deps.db.kysely), { id: w.mailboxes.bob });
          throw new MailError('try later', { permanent: false, code: '421' });
        }),
      );
      await eventually('outbox empty', outboxEmpty(t), 15_000);
      assert.ok(refused, 'the first attempt of the mail retried went out');
      assert.deepEqual(sent, [], 'nothing sent from a removed mailbox');
      for (const [id, attempts] of [
        [full, 1],
        [meta, 1],
        [retried, 2],
      ] as const) {
        assert.deepEqual(
          { ...(await emailRow(t, id)) },
          { delivery_status: 'failed', delivery_attempts: attempts, delivery_error: 'MAILBOX_REMOVED', delivered_at: null },
        );
      }
      assert.equal(await metric(t, 'rolodex_email_delivery_failures_total{transport="smtp",final="true"}'), finalBefore + 3);
      // What the API answered never changes, and the mail stays, read as before.
      assert.equal((await call(t, w.keys.ann, 'GET', `/v1/emails/${full}`)).statusCode, 200);
    });

    test('a mailbox brought back by a re-import before its queued mail was settled sends that mail', async (tc) => {
      const t = ctx();
      const w = await seedEmailWorld(t);
      const id = await sendOne(t, w, w.addresses.full, `brought back ${w.tag}`);
      await removeMailbox(systemCtx(t.deps.db.kysely), { id: w.mailboxes.full });
      await importInto(t, w.workspaceId, [{ object: 'mailbox', externalId: 'mb-full', user: 'u-ann', address: w.addresses.full }]);
      const sent: string[] = [];
      start(tc, t, recorder(sent));
      await eventually('outbox empty', outboxEmpty(t), 15_000);
      assert.deepEqual(sent, [messageIdOf(id, w.addresses.full)]);
      assert.equal((await emailRow(t, id)).delivery_status, 'sent');
    });
  },
  { env: () => ({ EMAIL_POLL_MS: '50', EMAIL_RETRY_BASE_MS: '200', EMAIL_RETRY_MAX_MS: '400' }) },
);
