// Attachments whose bytes the blob store lost (docs/emails.md §Delivery, docs/files.md §Bytes
// missing from the store), delivered by the dispatcher to a real SMTP server on both databases, on
// disk and on S3: an attachment with nothing under its key, a blob of another size than recorded or
// a damaged disk blob fails its e-mail for good at the first attempt as ATTACHMENT_MISSING, sends
// nothing, and logs one line at error naming the e-mail, the file and its key. An attachment whose
// stream cannot be opened leaves no other attachment's stream open, and the e-mail goes once the
// store answers again.
import assert from 'node:assert/strict';
import { truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test, type TestContext } from 'node:test';
import { type BlobStore, BlobStoreUnavailableError } from '../../src/blobs/blob-store.ts';
import { messageIdOf, startMailDispatcher } from '../../src/jobs/mail-dispatcher.ts';
import { createMailTransport } from '../../src/mail/index.ts';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { type EmailWorld, metric, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { type Backend, backendDeps, uploadFile } from '../helpers/files.ts';
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

const FINAL = 'rolodex_email_delivery_failures_total{transport="smtp",final="true"}';

async function emailRow(t: TestApp, id: string) {
  return {
    ...(await t.deps.db.kysely
      .selectFrom('emails')
      .select(['delivery_status', 'delivery_attempts', 'delivery_error', 'delivered_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()),
  };
}

const blobKeyOf = async (t: TestApp, id: string) =>
  (await t.deps.db.kysely.selectFrom('files').select('blob_key').where('id', '=', id).executeTakeFirstOrThrow()).blob_key as string;

/** Sends from ann's mailbox and returns the new e-mail's id. */
async function sendOne(t: TestApp, w: EmailWorld, subject: string, attachments: string[]): Promise<string> {
  const res = await call(t, w.keys.ann, 'POST', '/v1/emails/send', sendBody(w.addresses.full, { subject, attachments }));
  assert.equal(res.statusCode, 200, res.body);
  return (await t.deps.db.kysely.selectFrom('emails').select('id').where('subject', '=', subject).executeTakeFirstOrThrow()).id;
}

/** The lines logged at error that say an attachment's bytes are missing. */
function missingLines(t: TestApp) {
  return t
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { level: number; msg: string; emailId: string; fileId: string; blobKey: string; found: string })
    .filter((l) => l.msg.startsWith("a COMPLETED file's bytes are missing from the blob store; the e-mail"));
}

/** A dispatcher through the real SMTP transport, reading `blobs`; stopped when test `tc` ends. */
async function startDispatcher(tc: TestContext, t: TestApp, blobs: BlobStore) {
  const dispatcher = startMailDispatcher({
    db: t.deps.db,
    blobs,
    transport: await createMailTransport(t.config.mail, t.deps.logger),
    logger: t.deps.logger,
    metrics: t.deps.metrics,
    mail: t.config.mail,
  });
  tc.after(() => dispatcher.stop());
  return dispatcher;
}

function suite(backend: Backend) {
  return (ctx: () => TestApp) => {
    test('an attachment missing, of another size or damaged fails the e-mail at once as ATTACHMENT_MISSING, sends nothing, logged at error', async (tc) => {
      const t = ctx();
      const w = await seedEmailWorld(t);
      const bytes = Buffer.from('0123456789abcdefghij');
      const damages: [string, string, (key: string) => Promise<unknown>][] = [
        ['nothing', 'nothing', (key) => t.deps.blobs.delete(key)],
        ['shorter', '4 bytes where 20 are recorded', (key) => t.deps.blobs.put(key, Readable.from([bytes.subarray(0, 4)]), { maxBytes: 4 })],
        ['longer', '40 bytes where 20 are recorded', (key) => t.deps.blobs.put(key, Readable.from([bytes, bytes]), { maxBytes: 40 })],
      ];
      // A blob file cut short: its bytes are there, the trailer that vouches for them is not.
      if (backend === 'disk') damages.push(['cut short', 'a damaged blob', (key) => truncate(join(t.config.dataDir, 'blobs', `${key}.blob`), 10)]);
      const cases: { what: string; found: string; emailId: string; fileId: string; key: string }[] = [];
      for (const [what, found, damage] of damages) {
        const file = await uploadFile(t, w.keys.ann, bytes, { filename: `${what}.txt`, mimeType: 'text/plain' });
        const key = await blobKeyOf(t, file.id);
        await damage(key);
        // A whole attachment first: the broken one is named, not the first.
        const emailId = await sendOne(t, w, `attachment ${what} ${w.tag}`, [w.files.small, file.id]);
        cases.push({ what, found, emailId, fileId: file.id, key });
      }
      const finalBefore = await metric(t, FINAL);
      const linesBefore = missingLines(t).length;
      await startDispatcher(tc, t, t.deps.blobs);

      for (const c of cases) {
        await eventually(`${c.what}: settled`, async () => (await emailRow(t, c.emailId)).delivery_status !== 'queued');
        assert.deepEqual(
          await emailRow(t, c.emailId),
          { delivery_status: 'failed', delivery_attempts: 1, delivery_error: 'ATTACHMENT_MISSING', delivered_at: null },
          c.what,
        );
        assert.equal(smtp.byMessageId(messageIdOf(c.emailId, w.addresses.full)).length, 0, `${c.what}: nothing sent`);
      }
      assert.deepEqual(await t.deps.db.kysely.selectFrom('email_outbox').select('email_id').execute(), []);
      assert.equal(await metric(t, FINAL), finalBefore + cases.length);
      const lines = missingLines(t).slice(linesBefore);
      assert.equal(lines.length, cases.length, 'one line for each e-mail');
      for (const c of cases) {
        const line = lines.find((l) => l.emailId === c.emailId);
        assert.ok(line, `${c.what}: logged`);
        assert.deepEqual([line.level, line.fileId, line.blobKey, line.found], [50, c.fileId, c.key, c.found], c.what);
      }
      assert.doesNotMatch(t.logs(), /delivery crashed/);
    });

    test('an attachment that cannot be opened leaves no stream of the others open; the store back, the e-mail goes', async (tc) => {
      const t = ctx();
      const w = await seedEmailWorld(t);
      const victim = await blobKeyOf(t, w.files.second);
      // The store answers sizes, but cannot open the second attachment while `failing`; every
      // stream it does open is kept to see whether it was destroyed.
      let failing = true;
      let refused = 0;
      const opened: Readable[] = [];
      const real = t.deps.blobs;
      const blobs = Object.assign(Object.create(real) as BlobStore, {
        async read(key: string) {
          if (failing && key === victim) {
            refused++;
            throw new BlobStoreUnavailableError('the test store does not answer');
          }
          const stream = await real.read(key);
          opened.push(stream);
          return stream;
        },
      });
      const subject = `streams closed ${w.tag}`;
      const id = await sendOne(t, w, subject, [w.files.small, w.files.second]);
      const dispatcher = await startDispatcher(tc, t, blobs);
      await eventually('two failed attempts', async () => refused >= 2 && (await emailRow(t, id)).delivery_attempts >= 2);
      assert.equal((await emailRow(t, id)).delivery_status, 'queued', 'a store that does not answer is worth another try');
      await eventually('the first attachment opened at each attempt', () => opened.length >= 2, 2000);
      await eventually('every opened stream destroyed', () => opened.every((s) => s.destroyed), 2000).catch(() => {
        assert.fail(`${opened.filter((s) => !s.destroyed).length} of ${opened.length} opened streams left open`);
      });

      failing = false;
      await eventually('delivered once the store answers', () => smtp.received.some((r) => r.mail.subject === subject));
      await eventually('sent', async () => (await emailRow(t, id)).delivery_status === 'sent');
      const [got] = smtp.byMessageId(messageIdOf(id, w.addresses.full));
      assert.deepEqual(
        got?.mail.attachments.map((a) => a.filename),
        ['notes.txt', 'data.bin'],
      );
      await dispatcher.stop();
      assert.ok(
        opened.every((s) => s.destroyed),
        'streams of the delivered message are consumed or destroyed',
      );
    });
  };
}

for (const backend of ['disk', 's3'] as const) {
  eachDialect(`e-mail attachments whose bytes the store lost (${backend})`, suite(backend), {
    ...backendDeps(backend),
    env: () => ({
      SMTP_URL: `smtp://127.0.0.1:${SMTP_PORT}`,
      EMAIL_POLL_MS: '50',
      EMAIL_RETRY_BASE_MS: '200',
      EMAIL_RETRY_MAX_MS: '400',
      EMAIL_LEASE_MS: '5000',
    }),
  });
}
