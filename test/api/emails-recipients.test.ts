// Recipients of a send or a draft on both databases: `to`, `cc` and `bcc` take an array of
// addresses or one address as a string, stored and answered as a list of one, as every
// multi-valued EMAIL field of the API takes it (docs/emails.md §Sending); a bad lone address
// names the member, and a refused request stores nothing. An import line takes them alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { type EmailWorld, importInto, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { assertError } from '../helpers/files.ts';

async function rows(t: TestApp, table: 'emails' | 'email_outbox' | 'email_drafts', workspaceId: string) {
  return (t.deps.db.kysely as any).selectFrom(table).selectAll().where('workspace_id', '=', workspaceId).execute() as Promise<any[]>;
}

eachDialect('emails recipients', (ctx) => {
  let w: EmailWorld;
  test('seed', async () => {
    w = await seedEmailWorld(ctx());
  });

  test('a send takes one address as a string in to, cc and bcc, stored and answered as a list of one', async () => {
    const t = ctx();
    const body = sendBody(w.addresses.full, { to: 'carol@example.test', cc: 'erin@example.test', bcc: 'frank@example.test' });
    const res = await call(t, w.keys.ann, 'POST', '/v1/emails/send', body);
    assert.equal(res.statusCode, 200, res.body);
    const item = (await call(t, w.keys.ann, 'GET', '/v1/emails?limit=1')).json().data[0];
    assert.deepEqual(item.fields.$to, { value: ['carol@example.test'], valueType: 'EMAIL' });
    assert.deepEqual(item.fields.$cc.value, ['erin@example.test']);
    assert.deepEqual(item.fields.$bcc.value, ['frank@example.test']);
    const [stored] = await rows(t, 'emails', w.workspaceId);
    assert.deepEqual(JSON.parse(stored.to_json), ['carol@example.test']);
    assert.equal((await rows(t, 'email_outbox', w.workspaceId)).length, 1, 'queued once');
  });

  test('a draft takes one address as a string, and it counts as filled', async () => {
    const t = ctx();
    const res = await call(t, w.keys.ann, 'POST', '/v1/emails/draft', { from: w.addresses.full, to: 'carol@example.test' });
    assert.equal(res.statusCode, 200, res.body);
    const drafts = await rows(t, 'email_drafts', w.workspaceId);
    assert.equal(drafts.length, 1);
    assert.deepEqual(JSON.parse(drafts[0].to_json), ['carol@example.test']);
    assert.deepEqual(JSON.parse(drafts[0].cc_json), []);
  });

  test('a bad lone address names the member; another JSON type is invalid_type; nothing is stored', async () => {
    const t = ctx();
    const before = { emails: (await rows(t, 'emails', w.workspaceId)).length, drafts: (await rows(t, 'email_drafts', w.workspaceId)).length };
    for (const path of ['/v1/emails/send', '/v1/emails/draft']) {
      const send = (extra: Record<string, unknown>) => call(t, w.keys.ann, 'POST', path, sendBody(w.addresses.full, extra));
      assertError(await send({ to: 'Carol <carol@example.test>' }), 400, 'invalid_value', 'to');
      assertError(await send({ cc: 'not an address' }), 400, 'invalid_value', 'cc');
      assertError(await send({ bcc: '' }), 400, 'invalid_value', 'bcc');
      assertError(await send({ to: 5 }), 400, 'invalid_type', 'to');
      assertError(await send({ cc: { address: 'a@example.test' } }), 400, 'invalid_type', 'cc');
    }
    assert.equal((await rows(t, 'emails', w.workspaceId)).length, before.emails);
    assert.equal((await rows(t, 'email_drafts', w.workspaceId)).length, before.drafts);
  });

  test('an import line takes one address as a string in $to, $cc and $bcc; a bad one names the field', async () => {
    const t = ctx();
    const line = (externalId: string, to: unknown) => ({
      object: 'email',
      externalId,
      mailbox: 'mb-full',
      fields: {
        $sentAt: { value: '2026-01-05T09:00:00Z', valueType: 'DATETIME' },
        $from: { value: 'buyer@globex.test', valueType: 'EMAIL' },
        $to: { value: to, valueType: 'EMAIL' },
        $cc: { value: 'erin@example.test', valueType: 'EMAIL' },
      },
    });
    const id = (await importInto(t, w.workspaceId, [line('e-one', w.addresses.full)])).ids.email?.['e-one'] as string;
    const one = (await call(t, w.keys.ann, 'GET', `/v1/emails/${id}`)).json();
    assert.deepEqual(one.fields.$to.value, [w.addresses.full]);
    assert.deepEqual(one.fields.$cc.value, ['erin@example.test']);
    assert.deepEqual(one.fields.$bcc.value, []);
    for (const bad of ['Ann <ann@acme.test>', 5]) {
      await assert.rejects(importInto(t, w.workspaceId, [line('e-bad', bad)]), (err: Error & { errors?: Array<{ message: string }> }) => {
        assert.match(err.errors?.[0]?.message ?? '', /fields\.\$to\.value: must be/, String(bad));
        return true;
      });
    }
  });
});
