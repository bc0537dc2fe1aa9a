// An e-mail's `$contact`: the contacts whose `$email` holds, ignoring case, any of its addresses
// (from, to, cc, bcc), computed when read, so a contact's changed address counts at once; it stays
// at METADATA. Contacts come by import, which keeps the value index the look-up reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect } from '../helpers/app.ts';
import { importInto, seedEmailWorld, sendBody } from '../helpers/emails.ts';

const contact = (externalId: string, email: string) => ({
  object: 'contact',
  externalId,
  fields: { $name: { value: { firstName: externalId, lastName: null }, valueType: 'FULL_NAME' }, $email: { value: [email], valueType: 'EMAIL' } },
});

eachDialect('emails $contact', (ctx) => {
  test('contacts among the addresses, ignoring case, as of each read', async () => {
    const t = ctx();
    const w = await seedEmailWorld(t);
    const ids = (
      await importInto(t, w.workspaceId, [
        contact('c-carol', 'Carol@Example.test'),
        contact('c-dave', 'dave@example.test'),
        contact('c-other', 'nobody@else.test'),
        {
          object: 'email',
          externalId: 'in-1',
          mailbox: 'mb-meta',
          fields: {
            $subject: { value: 'From Dave', valueType: 'TEXT' },
            $sentAt: { value: '2026-01-01T00:00:00Z', valueType: 'DATETIME' },
            $from: { value: 'DAVE@example.test', valueType: 'EMAIL' },
            $to: { value: [w.addresses.meta], valueType: 'EMAIL' },
          },
        },
      ])
    ).ids;
    const carol = ids.contact?.['c-carol'] as string;
    const dave = ids.contact?.['c-dave'] as string;
    const res = await call(t, w.keys.ann, 'POST', '/v1/emails/send', sendBody(w.addresses.full, { to: ['carol@example.test'], bcc: ['Dave@Example.Test'] }));
    assert.equal(res.statusCode, 200, res.body);
    const list = (await call(t, w.keys.bob, 'GET', '/v1/emails')).json();
    const [sent, received] = list.data;
    assert.deepEqual(sent.relationships.$contact, { cardinality: 'has_many', objectType: 'contact', values: [carol, dave].sort() });
    assert.equal(received.accessLevel, 'METADATA');
    assert.deepEqual(received.relationships.$contact.values, [dave], 'the sender is a contact too, and $contact stays at METADATA');
    assert.deepEqual((await call(t, w.keys.workspace, 'GET', `/v1/emails/${received.id}`)).json().relationships.$contact.values, [dave]);
    // Dave's address changes: the next read follows.
    await importInto(t, w.workspaceId, [contact('c-dave', 'dave@elsewhere.test')]);
    const again = (await call(t, w.keys.ann, 'GET', `/v1/emails/${sent.id}`)).json();
    assert.deepEqual(again.relationships.$contact.values, [carol]);
    assert.deepEqual((await call(t, w.keys.ann, 'GET', `/v1/emails/${received.id}`)).json().relationships.$contact.values, []);
  });
});
