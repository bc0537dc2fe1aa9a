// Who reads what (docs/emails.md): the mailbox's owner, another user and a workspace key × a
// mailbox others see at FULL or at METADATA, on list and retrieve, for sent and imported mail.
// Canary text in subjects, bodies and attachments' names never reaches a caller without FULL
// access, nor any log line; a change of a mailbox's visibility applies to the very next request.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { startMailDispatcher } from '../../src/jobs/mail-dispatcher.ts';
import { createMailTransport } from '../../src/mail/index.ts';
import { removeMailbox } from '../../src/mailboxes/service.ts';
import { systemCtx } from '../../src/lib/context.ts';
import { call, eachDialect } from '../helpers/app.ts';
import { importInto, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { eventually } from '../helpers/smtp.ts';

type Level = 'FULL' | 'METADATA';

/** docs/emails.md §Who reads what, written out apart from the server's SQL. */
function expected(caller: 'ann' | 'bob' | 'workspace', othersSee: Level): Level {
  return caller === 'ann' ? 'FULL' : othersSee;
}

eachDialect('emails access', (ctx) => {
  test('owner, other user and workspace key × FULL and METADATA mailboxes, on list and retrieve, with no canary leak', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    const mails: Array<{ id: string; othersSee: Level; subject: string }> = [];
    for (const [mailbox, othersSee] of [
      ['full', 'FULL'],
      ['meta', 'METADATA'],
    ] as const) {
      const subject = `${canary} subject ${mailbox}`;
      const res = await call(
        t,
        w.keys.ann,
        'POST',
        '/v1/emails/send',
        sendBody(w.addresses[mailbox], {
          subject,
          cc: ['cc@example.test'],
          bcc: ['bcc@example.test'],
          messageBody: { content: `<p>${canary} body</p>` },
          attachments: [w.files.small],
        }),
      );
      assert.equal(res.statusCode, 200, res.body);
      const imported = await importInto(t, w.workspaceId, [
        {
          object: 'email',
          externalId: `in-${mailbox}`,
          mailbox: `mb-${mailbox}`,
          fields: {
            $subject: { value: `${canary} imported ${mailbox}`, valueType: 'TEXT' },
            $body: { value: `${canary} imported body`, valueType: 'TEXT' },
            $sentAt: { value: '2026-01-01T00:00:00Z', valueType: 'DATETIME' },
            $from: { value: 'sender@example.test', valueType: 'EMAIL' },
            $to: { value: [w.addresses[mailbox]], valueType: 'EMAIL' },
          },
          relationships: { $attachment: { objectType: 'file', values: ['f-second'] } },
        },
      ]);
      const list = (await call(t, w.keys.ann, 'GET', '/v1/emails?limit=25')).json();
      const sent = list.data.find((e: { fields: { $subject: { value: string } } }) => e.fields.$subject.value === subject);
      mails.push(
        { id: sent.id, othersSee, subject },
        { id: imported.ids.email?.[`in-${mailbox}`] as string, othersSee, subject: `${canary} imported ${mailbox}` },
      );
    }

    let checked = 0;
    for (const caller of ['ann', 'bob', 'workspace'] as const) {
      const key = w.keys[caller];
      const list = await call(t, key, 'GET', '/v1/emails');
      assert.equal(list.statusCode, 200);
      const body = list.json();
      assert.equal(body.totalCount, 4, `${caller}: no e-mail is hidden`);
      for (const m of mails) {
        const level = expected(caller, m.othersSee);
        const item = body.data.find((e: { id: string }) => e.id === m.id);
        const one = await call(t, key, 'GET', `/v1/emails/${m.id}`);
        assert.equal(one.statusCode, 200, one.body);
        for (const [where, e] of [
          ['list', item],
          ['get', one.json()],
        ] as const) {
          const at = `${caller} ${where} ${m.subject.replace(canary, '')}`;
          assert.equal(e.accessLevel, level, at);
          assert.equal(e.fields.$subject.value, level === 'FULL' ? m.subject : null, at);
          // At METADATA the attachments are withheld by leaving `$attachment` out.
          if (level === 'FULL') assert.equal(e.relationships.$attachment.values.length, 1, at);
          else assert.ok(!('$attachment' in e.relationships), at);
          // Addresses, $sentAt and the owner stay at METADATA.
          assert.ok(e.fields.$to.value.length >= 1, at);
          assert.match(e.fields.$sentAt.value, /^\d{4}-/, at);
          assert.deepEqual(e.relationships.$owner.values, [w.users.ann], at);
          checked++;
        }
        const got = one.json();
        if (level === 'FULL') assert.ok(String(got.fields.$body.value).includes(canary), `${caller} reads the body`);
        else {
          assert.deepEqual(got.fields.$body, { value: null, valueType: 'HTML' });
          assert.ok(!one.body.includes(canary), `${caller}: canary in a METADATA answer`);
        }
      }
      if (caller === 'ann') assert.ok(list.body.includes(canary));
      else {
        const metaItems = body.data.filter((e: { accessLevel: string }) => e.accessLevel === 'METADATA');
        assert.equal(metaItems.length, 2);
        assert.ok(!JSON.stringify(metaItems).includes(canary), `${caller}: canary in a METADATA list item`);
      }
    }
    assert.equal(checked, 24);
    // Delivered by the log transport (no SMTP_URL): it logs that each e-mail went out, nothing of it.
    const mail = { ...t.config.mail, pollMs: 20 };
    const dispatcher = startMailDispatcher({
      db: t.deps.db,
      blobs: t.deps.blobs,
      transport: await createMailTransport(mail, t.deps.logger),
      logger: t.deps.logger,
      mail,
    });
    try {
      await eventually('the outbox delivered', async () => (await t.deps.db.kysely.selectFrom('email_outbox').selectAll().execute()).length === 0);
    } finally {
      await dispatcher.stop();
    }
    const logged = t
      .logs()
      .split('\n')
      .filter((l) => l.includes('log transport: not sent'));
    assert.equal(logged.length, 2, 'one line per e-mail');
    assert.ok(t.logs().includes('sendEmail') && t.logs().includes('listEmails'), 'requests were logged');
    assert.ok(!t.logs().includes(canary), 'e-mail content reached the logs');
    assert.ok(!t.logs().includes('cc@example.test'), 'an address reached the logs');
  });

  test("a mailbox's visibility and removal apply to the very next request; its mail stays", async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    assert.equal((await call(t, w.keys.ann, 'POST', '/v1/emails/send', sendBody(w.addresses.full))).statusCode, 200);
    const id = (await call(t, w.keys.ann, 'GET', '/v1/emails')).json().data[0].id;
    const level = async (key: string) => (await call(t, key, 'GET', `/v1/emails/${id}`)).json().accessLevel;
    assert.deepEqual([await level(w.keys.ann), await level(w.keys.bob), await level(w.keys.workspace)], ['FULL', 'FULL', 'FULL']);
    await importInto(t, w.workspaceId, [{ object: 'mailbox', externalId: 'mb-full', user: 'u-ann', address: w.addresses.full, othersSee: 'METADATA' }]);
    assert.deepEqual([await level(w.keys.ann), await level(w.keys.bob), await level(w.keys.workspace)], ['FULL', 'METADATA', 'METADATA']);
    // The mailbox changes hands: its mail is the new owner's.
    await importInto(t, w.workspaceId, [{ object: 'mailbox', externalId: 'mb-full', user: 'u-bob', address: w.addresses.full, othersSee: 'METADATA' }]);
    assert.deepEqual([await level(w.keys.ann), await level(w.keys.bob)], ['METADATA', 'FULL']);
    await removeMailbox(systemCtx(t.deps.db.kysely), { id: w.mailboxes.full });
    assert.deepEqual([await level(w.keys.ann), await level(w.keys.bob)], ['METADATA', 'FULL'], 'mail of a removed mailbox is read as before');
    const refused = await call(t, w.keys.bob, 'POST', '/v1/emails/send', sendBody(w.addresses.full));
    assert.equal(refused.json().error.code, 'unknown_mailbox', 'a removed mailbox sends nothing');
  });

  test("another workspace's e-mails are 404 like random ids and never listed", async () => {
    const t = ctx();
    const a = await seedEmailWorld(t);
    const b = await seedEmailWorld(t);
    assert.equal((await call(t, a.keys.ann, 'POST', '/v1/emails/send', sendBody(a.addresses.full))).statusCode, 200);
    const id = (await call(t, a.keys.ann, 'GET', '/v1/emails')).json().data[0].id;
    assert.deepEqual((await call(t, b.keys.ann, 'GET', '/v1/emails')).json(), { data: [], object: 'list', totalCount: 0 });
    const foreign = await call(t, b.keys.bob, 'GET', `/v1/emails/${id}`);
    const random = await call(t, b.keys.bob, 'GET', '/v1/emails/eml_00000000000000000000000000');
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json().error.message.replace(id, 'X'), random.json().error.message.replace('eml_00000000000000000000000000', 'X'));
  });
});
