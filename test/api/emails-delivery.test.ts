// Delivery to a real SMTP server (smtp-server on 127.0.0.1), by the dispatcher the server runs,
// on both databases: a send arrives once with its recipients, subject, body and attachments
// intact; the same Idempotency-Key twice is one message; with the SMTP server down the API still
// answers, /readyz stays ready, the outbox keeps the mail and delivers it when the server returns;
// a recipient refused for good fails the e-mail without retries; /metrics counts all of it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Dispatcher, messageIdOf, startMailDispatcher } from '../../src/jobs/mail-dispatcher.ts';
import { createMailTransport } from '../../src/mail/index.ts';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { type EmailWorld, metric, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { freePort } from '../helpers/process.ts';
import { eventually, startTestSmtp, type TestSmtp } from '../helpers/smtp.ts';

// Chosen before any suite builds its server: each is configured with it.
let SMTP_PORT: number;
let smtp: TestSmtp;
before(async () => {
  SMTP_PORT = await freePort();
  smtp = await startTestSmtp(SMTP_PORT);
});
after(async () => {
  await smtp.stop();
});

async function emailRow(t: TestApp, id: string) {
  return (await t.deps.db.kysely.selectFrom('emails').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as Record<string, any>;
}

async function outboxRows(t: TestApp) {
  return t.deps.db.kysely.selectFrom('email_outbox').selectAll().execute();
}

/** Sends and returns the new e-mail's id (the newest of the caller's list). */
async function sendOne(t: TestApp, w: EmailWorld, body: unknown, extra: Record<string, string> = {}): Promise<{ id: string; sentAt: string }> {
  const res = await call(t, w.keys.ann, 'POST', '/v1/emails/send', body, extra);
  assert.equal(res.statusCode, 200, res.body);
  const newest = (await call(t, w.keys.ann, 'GET', '/v1/emails?limit=1')).json().data[0];
  assert.equal(newest.fields.$sentAt.value, res.json().sentAt);
  return { id: newest.id, sentAt: res.json().sentAt };
}

eachDialect(
  'emails delivery',
  (ctx) => {
    let w: EmailWorld;
    let dispatcher: Dispatcher;
    before(async () => {
      const t = ctx();
      w = await seedEmailWorld(t);
      dispatcher = startMailDispatcher({
        db: t.deps.db,
        blobs: t.deps.blobs,
        transport: await createMailTransport(t.config.mail, t.deps.logger),
        logger: t.deps.logger,
        metrics: t.deps.metrics,
        mail: t.config.mail,
      });
    });
    after(async () => {
      await dispatcher.stop();
    });

    test('a send arrives once, with its recipients, subject, body and attachments intact', async () => {
      const t = ctx();
      const before = smtp.received.length;
      const { id, sentAt } = await sendOne(
        t,
        w,
        sendBody(w.addresses.full, {
          to: ['carol@example.test', 'dave@example.test'],
          cc: ['erin@example.test'],
          bcc: ['frank@example.test'],
          subject: 'Quarterly numbers — ünïcode',
          messageBody: { contentType: 'TEXT', content: 'Hello Carol,\nthe numbers are attached.\n' },
          attachments: [w.files.small, w.files.second],
        }),
      );
      await smtp.waitFor(before + 1);
      await eventually('delivery recorded', async () => (await emailRow(t, id)).delivery_status === 'sent');
      const got = smtp.byMessageId(messageIdOf(id, w.addresses.full));
      assert.equal(got.length, 1, 'exactly one copy');
      const [{ envelope, mail }] = got as [(typeof got)[0]];
      assert.equal(envelope.from, w.addresses.full);
      assert.deepEqual(envelope.to.sort(), ['carol@example.test', 'dave@example.test', 'erin@example.test', 'frank@example.test']);
      assert.equal(mail.subject, 'Quarterly numbers — ünïcode');
      assert.equal(mail.text, 'Hello Carol,\nthe numbers are attached.\n');
      assert.equal(mail.html, false, 'a TEXT body is delivered as plain text');
      assert.equal(mail.headers.get('bcc'), undefined, 'bcc is not in the headers');
      // The Date header has whole seconds.
      assert.equal(mail.date?.getTime(), Math.floor(Date.parse(sentAt) / 1000) * 1000);
      const second = await t.deps.blobs.read(
        (await t.deps.db.kysely.selectFrom('files').select('blob_key').where('id', '=', w.files.second).executeTakeFirstOrThrow()).blob_key!,
      );
      const secondBytes = Buffer.concat(await second.toArray());
      assert.deepEqual(
        mail.attachments.map((a) => [a.filename, a.contentType]),
        [
          ['notes.txt', 'text/plain'],
          ['data.bin', 'application/octet-stream'],
        ],
      );
      assert.ok(mail.attachments[0]!.content.equals(w.smallBytes), 'first attachment intact');
      assert.ok(mail.attachments[1]!.content.equals(secondBytes), 'second attachment intact');
      const row = await emailRow(t, id);
      assert.equal(row.delivery_attempts, 1);
      assert.ok(row.delivered_at >= sentAt);
      assert.deepEqual(await outboxRows(t), []);
      // An HTML body is delivered as HTML.
      const html = await sendOne(t, w, sendBody(w.addresses.meta, { messageBody: { content: '<p>Hi <b>there</b></p>' } }));
      await eventually('html delivered', () => smtp.byMessageId(messageIdOf(html.id, w.addresses.meta)).length === 1);
      // The parser ends the HTML part with a line break of its own.
      assert.equal(String(smtp.byMessageId(messageIdOf(html.id, w.addresses.meta))[0]!.mail.html).trimEnd(), '<p>Hi <b>there</b></p>');
      // The row is settled just after the server accepted the message.
      await eventually('outbox depth 0', async () => (await metric(t, 'rolodex_email_outbox_depth')) === 0);
      assert.ok((await metric(t, 'rolodex_email_deliveries_total{transport="smtp"}')) >= 2);
    });

    test('the same Idempotency-Key twice is one message', async () => {
      const t = ctx();
      const subject = `Only once ${w.tag}`;
      const body = sendBody(w.addresses.full, { subject });
      const first = await sendOne(t, w, body, { 'idempotency-key': 'deliver-once' });
      const replay = await call(t, w.keys.ann, 'POST', '/v1/emails/send', body, { 'idempotency-key': 'deliver-once' });
      assert.equal(replay.json().sentAt, first.sentAt);
      await eventually('delivered', async () => (await emailRow(t, first.id)).delivery_status === 'sent');
      // Long enough for a second copy to arrive if one had been queued.
      await new Promise((r) => setTimeout(r, 4 * t.config.mail.pollMs));
      assert.equal(smtp.received.filter((r) => r.mail.subject === subject).length, 1);
    });

    test('SMTP down: the API answers, /readyz stays ready, the outbox keeps the mail and delivers it when the server returns', async () => {
      const t = ctx();
      const subject = `While down ${w.tag}`;
      await smtp.stop();
      try {
        const failuresBefore = await metric(t, 'rolodex_email_delivery_failures_total{transport="smtp",final="false"}');
        const { id } = await sendOne(t, w, sendBody(w.addresses.full, { subject }));
        await eventually('a failed attempt', async () => (await emailRow(t, id)).delivery_attempts >= 1);
        const row = await emailRow(t, id);
        assert.equal(row.delivery_status, 'queued');
        assert.ok(row.delivery_error, 'the failure is recorded on the e-mail');
        const [queued] = await outboxRows(t);
        assert.equal(queued?.email_id, id, 'the outbox keeps the mail');
        assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
        assert.ok((await metric(t, 'rolodex_email_delivery_failures_total{transport="smtp",final="false"}')) > failuresBefore);
        assert.equal(await metric(t, 'rolodex_email_outbox_depth'), 1);
        assert.equal((await call(t, w.keys.ann, 'GET', `/v1/emails/${id}`)).json().fields.$subject.value, subject, 'the answer does not change');
      } finally {
        await smtp.start();
      }
      await eventually('delivered after the server returned', () => smtp.received.some((r) => r.mail.subject === subject));
      assert.equal(smtp.received.filter((r) => r.mail.subject === subject).length, 1);
      await eventually('outbox empty', async () => (await outboxRows(t)).length === 0);
    });

    test('a recipient refused for good (550) fails the e-mail without retries', async () => {
      const t = ctx();
      smtp.refuse.add('gone@example.test');
      const finalBefore = await metric(t, 'rolodex_email_delivery_failures_total{transport="smtp",final="true"}');
      const { id } = await sendOne(t, w, sendBody(w.addresses.full, { to: ['gone@example.test'], subject: 'Bounce' }));
      await eventually('failed', async () => (await emailRow(t, id)).delivery_status === 'failed');
      const row = await emailRow(t, id);
      assert.equal(row.delivery_attempts, 1);
      assert.equal(row.delivery_error, '550');
      assert.deepEqual(await outboxRows(t), []);
      assert.equal(await metric(t, 'rolodex_email_delivery_failures_total{transport="smtp",final="true"}'), finalBefore + 1);
    });
  },
  {
    env: () => ({
      SMTP_URL: `smtp://127.0.0.1:${SMTP_PORT}`,
      EMAIL_POLL_MS: '50',
      EMAIL_RETRY_BASE_MS: '200',
      EMAIL_RETRY_MAX_MS: '400',
      EMAIL_LEASE_MS: '5000',
    }),
  },
);
