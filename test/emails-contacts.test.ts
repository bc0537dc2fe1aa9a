// An e-mail's `$contact`: the contacts whose `$email` holds, ignoring case, any of its addresses
// (from, to, cc, bcc), computed when read, so a contact's changed address counts at once; it stays
// at METADATA.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { foldText } from '../src/lib/fold.ts';
import { replaceValues } from '../src/records/repository.ts';
import { call, eachDialect, type TestApp } from './helpers/app.ts';
import { importInto, seedEmailWorld, sendBody } from './helpers/emails.ts';

const contact = (externalId: string, email: string) => ({
  object: 'contact',
  externalId,
  fields: { $name: { value: { firstName: externalId, lastName: null }, valueType: 'FULL_NAME' }, $email: { value: email, valueType: 'EMAIL' } },
});

/**
 * Writes the contacts' `$email` rows of the value index as the records writers do (replaceValues).
 * The records import does not write the index yet; once it does, this only rewrites equal rows.
 */
async function indexEmails(t: TestApp, workspaceId: string, byId: Record<string, string>) {
  const rows = Object.entries(byId).map(([record_id, email]) => ({
    workspace_id: workspaceId,
    object_type: 'contact',
    field: '$email',
    value_text: foldText(email),
    value_num: null,
    record_id,
  }));
  await t.deps.db.kysely.transaction().execute((tx) => replaceValues(tx, Object.keys(byId), rows));
}

await eachDialect('emails $contact', (ctx) => {
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
    await indexEmails(t, w.workspaceId, {
      [carol]: 'Carol@Example.test',
      [dave]: 'dave@example.test',
      [ids.contact?.['c-other'] as string]: 'nobody@else.test',
    });
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
    await indexEmails(t, w.workspaceId, { [dave]: 'dave@elsewhere.test' });
    const again = (await call(t, w.keys.ann, 'GET', `/v1/emails/${sent.id}`)).json();
    assert.deepEqual(again.relationships.$contact.values, [carol]);
    assert.deepEqual((await call(t, w.keys.ann, 'GET', `/v1/emails/${received.id}`)).json().relationships.$contact.values, []);
  });
});
