// The e-mail endpoints on both databases: the send and draft checks in their order, what a send
// stores (the e-mail, its outbox row, a TEXT body as escaped HTML), idempotent replays, the list's
// order, count and shape, the limits (20 MiB per attachment, 500 recipients across to, cc and
// bcc), and the email_attachment file purpose.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { type EmailWorld, importInto, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { assertError } from '../helpers/files.ts';

const send = (t: TestApp, key: string, body: unknown, extra: Record<string, string> = {}) => call(t, key, 'POST', '/v1/emails/send', body, extra);
const draft = (t: TestApp, key: string, body: unknown, extra: Record<string, string> = {}) => call(t, key, 'POST', '/v1/emails/draft', body, extra);

async function rows(t: TestApp, table: 'emails' | 'email_outbox' | 'email_drafts', workspaceId: string) {
  return (t.deps.db.kysely as any).selectFrom(table).selectAll().where('workspace_id', '=', workspaceId).execute() as Promise<any[]>;
}

eachDialect('emails', (ctx) => {
  let w: EmailWorld;
  test('seed', async () => {
    w = await seedEmailWorld(ctx(), { bigFiles: true });
  });

  test('send and draft refuse, in order: workspace key, unknown mailbox, then each attachment', async () => {
    const t = ctx();
    for (const op of [send, draft]) {
      assertError(await op(t, w.keys.workspace, sendBody('nobody@acme.test', { attachments: ['fil_nope'] })), 403, 'user_required');
      // Another user's mailbox, an unknown address: the same answer.
      assertError(await op(t, w.keys.ann, sendBody(w.addresses.bob, { attachments: ['fil_nope'] })), 400, 'unknown_mailbox', 'from');
      assertError(await op(t, w.keys.bob, sendBody(w.addresses.full)), 400, 'unknown_mailbox', 'from');
      const unknown = await op(t, w.keys.ann, sendBody('someone@acme.test'));
      assertError(unknown, 400, 'unknown_mailbox', 'from');
      // docs/emails.md: an address is never repeated in an error message.
      assert.ok(!unknown.body.toLowerCase().includes('someone@acme.test'), unknown.body);
      const from = w.addresses.full;
      assertError(await op(t, w.keys.ann, sendBody(from, { attachments: [w.files.small, 'fil_nope'] })), 400, 'referenced_resource_missing', 'attachments[1]');
      assertError(await op(t, w.keys.ann, sendBody(from, { attachments: [w.files.pending, w.files.big] })), 400, 'invalid_value', 'attachments[0]');
      assertError(await op(t, w.keys.ann, sendBody(from, { attachments: [w.files.small, w.files.big] })), 400, 'file_too_large', 'attachments[1]');
      const six = [w.files.small, w.files.small, w.files.small, w.files.small, w.files.small, w.files.small];
      assertError(await op(t, w.keys.ann, sendBody(from, { attachments: six })), 400, 'invalid_value', 'attachments');
    }
    // Another workspace's file is answered like an unknown one.
    const other = await seedEmailWorld(t);
    const foreign = await send(t, w.keys.ann, sendBody(w.addresses.full, { attachments: [other.files.small] }));
    assertError(foreign, 400, 'referenced_resource_missing', 'attachments[0]');
    assert.deepEqual(await rows(t, 'emails', w.workspaceId), [], 'nothing refused was stored');
    assert.deepEqual(await rows(t, 'email_outbox', w.workspaceId), []);
    assert.deepEqual(await rows(t, 'email_drafts', w.workspaceId), []);
  });

  test('the bodies are closed and checked before anything else', async () => {
    const t = ctx();
    const from = w.addresses.full;
    assertError(await send(t, w.keys.ann, sendBody(from, { to: [] })), 400, 'invalid_value', 'to');
    assertError(await send(t, w.keys.ann, sendBody(from, { to: ['Ann <ann@acme.test>'] })), 400, 'invalid_value', 'to[0]');
    assertError(await send(t, w.keys.ann, sendBody(from, { cc: ['ok@acme.test', 'not an address'] })), 400, 'invalid_value', 'cc[1]');
    const many = Array.from({ length: 501 }, (_, i) => `r${i}@example.test`);
    assertError(await send(t, w.keys.ann, sendBody(from, { bcc: many })), 400, 'invalid_value', 'bcc');
    assertError(await send(t, w.keys.ann, sendBody(from, { subject: '' })), 400, 'invalid_value', 'subject');
    assertError(await send(t, w.keys.ann, sendBody(from, { messageBody: { content: '' } })), 400, 'invalid_value', 'messageBody.content');
    assertError(
      await send(t, w.keys.ann, sendBody(from, { messageBody: { contentType: 'MARKDOWN', content: 'x' } })),
      400,
      'invalid_value',
      'messageBody.contentType',
    );
    assertError(await send(t, w.keys.ann, sendBody(from, { messageBody: { contentType: 'TEXT' } })), 400, 'parameter_missing', 'messageBody.content');
    assertError(await send(t, w.keys.ann, sendBody(from, { replyTo: 'x@acme.test' })), 400, 'unknown_field', 'replyTo');
    assertError(await send(t, w.keys.ann, { from, to: ['a@example.test'], messageBody: { content: 'x' } }), 400, 'parameter_missing', 'subject');
    assertError(await send(t, w.keys.ann, sendBody(from, { to: 5 })), 400, 'invalid_type', 'to');
    // A draft needs something besides from; empty members do not count.
    assertError(await draft(t, w.keys.ann, { from }), 400, 'parameter_missing');
    assertError(await draft(t, w.keys.ann, { from, to: [], subject: '', messageBody: { content: '' }, attachments: [] }), 400, 'parameter_missing');
    assertError(await draft(t, w.keys.ann, { from, messageBody: {} }), 400, 'parameter_missing', 'messageBody.content');
  });

  test('send stores the e-mail and its outbox row, answers sentAt, and keeps a TEXT body as escaped HTML', async () => {
    const t = ctx();
    const text = 'Tom & Jerry <tom@x.test> said "hi"\nand left';
    const res = await send(
      t,
      w.keys.ann,
      sendBody(w.addresses.full.toUpperCase(), {
        to: ['carol@example.test', 'dave@example.test'],
        cc: ['erin@example.test'],
        bcc: ['frank@example.test'],
        subject: 'Plans',
        messageBody: { contentType: 'TEXT', content: text },
        attachments: [w.files.small, w.files.second, w.files.small],
      }),
    );
    assert.equal(res.statusCode, 200, res.body);
    const { sentAt } = res.json();
    assert.deepEqual(Object.keys(res.json()), ['sentAt']);
    assert.match(sentAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const list = (await call(t, w.keys.ann, 'GET', '/v1/emails')).json();
    const item = list.data[0];
    assert.equal(item.fields.$sentAt.value, sentAt);
    assert.equal(item.createdAt, sentAt);
    assert.equal(item.updatedAt, sentAt);
    assert.equal(item.objectType, 'email');
    assert.equal(item.accessLevel, 'FULL');
    assert.equal(item.externalId, null);
    assert.equal(item.fields.$subject.value, 'Plans');
    assert.deepEqual(item.fields.$to, { value: ['carol@example.test', 'dave@example.test'], valueType: 'EMAIL' });
    assert.deepEqual(item.fields.$cc.value, ['erin@example.test']);
    assert.deepEqual(item.fields.$bcc.value, ['frank@example.test']);
    assert.equal(item.fields.$from.value, w.addresses.full.toUpperCase());
    assert.deepEqual(item.relationships.$attachment, { cardinality: 'has_many', objectType: 'file', values: [w.files.small, w.files.second] });
    assert.deepEqual(item.relationships.$owner, { cardinality: 'has_one', objectType: 'member', values: [w.users.ann] });
    assert.ok(!('$body' in item.fields), 'a list item has no $body');
    const one = (await call(t, w.keys.ann, 'GET', `/v1/emails/${item.id}`)).json();
    assert.deepEqual(one.fields.$body, { value: 'Tom &amp; Jerry &lt;tom@x.test&gt; said &quot;hi&quot;<br>\nand left', valueType: 'HTML' });
    const outbox = await rows(t, 'email_outbox', w.workspaceId);
    assert.deepEqual(
      outbox.map((r) => [r.email_id, r.attempts, r.next_attempt_at]),
      [[item.id, 0, sentAt]],
    );
    const [stored] = await rows(t, 'emails', w.workspaceId);
    assert.equal(stored.delivery_status, 'queued');
    // An HTML body is kept as given.
    const html = await send(t, w.keys.ann, sendBody(w.addresses.meta, { messageBody: { content: '<p>Hi <b>there</b></p>' } }));
    const id = (await call(t, w.keys.ann, 'GET', '/v1/emails?limit=1')).json().data[0].id;
    assert.equal(html.statusCode, 200);
    assert.equal((await call(t, w.keys.ann, 'GET', `/v1/emails/${id}`)).json().fields.$body.value, '<p>Hi <b>there</b></p>');
  });

  test('the same Idempotency-Key answers the same sentAt and queues nothing more', async () => {
    const t = ctx();
    const before = (await rows(t, 'email_outbox', w.workspaceId)).length;
    const body = sendBody(w.addresses.full, { subject: 'Once' });
    const first = await send(t, w.keys.ann, body, { 'idempotency-key': 'send-once' });
    const second = await send(t, w.keys.ann, body, { 'idempotency-key': 'send-once' });
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.body, first.body);
    assert.equal((await rows(t, 'email_outbox', w.workspaceId)).length, before + 1);
    assertError(await send(t, w.keys.ann, { ...body, subject: 'Twice' }, { 'idempotency-key': 'send-once' }), 422, 'idempotency_key_reused');
    const d1 = await draft(t, w.keys.ann, { from: w.addresses.full, subject: 'Later' }, { 'idempotency-key': 'draft-once' });
    const d2 = await draft(t, w.keys.ann, { from: w.addresses.full, subject: 'Later' }, { 'idempotency-key': 'draft-once' });
    assert.equal(d1.statusCode, 200, d1.body);
    assert.equal(d2.body, d1.body);
    assert.equal((await rows(t, 'email_drafts', w.workspaceId)).length, 1);
  });

  test('drafts are stored with their mailbox and never listed', async () => {
    const t = ctx();
    const total = (await call(t, w.keys.ann, 'GET', '/v1/emails')).json().totalCount;
    const res = await draft(t, w.keys.ann, {
      from: w.addresses.meta,
      to: ['later@example.test'],
      messageBody: { contentType: 'TEXT', content: 'a < b' },
      attachments: [w.files.second],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(Object.keys(res.json()), ['draftedAt']);
    const stored = (await rows(t, 'email_drafts', w.workspaceId)).find((d) => d.drafted_at === res.json().draftedAt);
    assert.equal(stored.mailbox_id, w.mailboxes.meta);
    assert.equal(stored.body_html, 'a &lt; b');
    assert.equal(stored.body_text, 'a < b');
    assert.deepEqual(JSON.parse(stored.attachments_json), [w.files.second]);
    const after = (await call(t, w.keys.ann, 'GET', '/v1/emails')).json();
    assert.equal(after.totalCount, total);
  });

  test('the list: newest $sentAt first, ties by id, exact totalCount, no $body, only limit and offset', async () => {
    const t = ctx();
    const world = await seedEmailWorld(t);
    const mail = (ext: string, at: string) => ({
      object: 'email',
      externalId: ext,
      mailbox: 'mb-full',
      fields: {
        $subject: { value: `s ${ext}`, valueType: 'TEXT' },
        $body: { value: `b ${ext}`, valueType: 'TEXT' },
        $sentAt: { value: at, valueType: 'DATETIME' },
        $from: { value: 'x@example.test', valueType: 'EMAIL' },
        $to: { value: [world.addresses.full], valueType: 'EMAIL' },
      },
    });
    const objects = Array.from({ length: 40 }, (_, i) => mail(`m${i}`, new Date(Date.UTC(2026, 0, 1, 0, i % 9)).toISOString()));
    const imported = await importInto(t, world.workspaceId, objects);
    const expected = objects
      .map((o) => ({ id: imported.ids.email?.[o.externalId] as string, at: o.fields.$sentAt.value }))
      .sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
      .map((e) => e.id);
    const seen: string[] = [];
    for (let offset = 0; offset < 45; offset += 7) {
      const page = await call(t, world.keys.bob, 'GET', `/v1/emails?limit=7&offset=${offset}`);
      assert.equal(page.statusCode, 200, page.body);
      assert.equal(page.json().totalCount, 40);
      for (const item of page.json().data) assert.ok(!('$body' in item.fields));
      seen.push(...page.json().data.map((e: { id: string }) => e.id));
    }
    assert.deepEqual(seen, expected);
    assert.deepEqual((await call(t, world.keys.bob, 'GET', '/v1/emails?offset=40')).json(), { data: [], object: 'list', totalCount: 40 });
    assertError(await call(t, world.keys.bob, 'GET', '/v1/emails?folder=sent'), 400, 'invalid_parameter', 'folder');
    assertError(await call(t, world.keys.bob, 'GET', '/v1/emails?limit=26'), 400, 'invalid_parameter', 'limit');
    // A re-import with another $sentAt moves the e-mail; a TEXT body is kept escaped.
    await importInto(t, world.workspaceId, [mail('m3', '2030-01-01T00:00:00.000Z')]);
    const first = (await call(t, world.keys.bob, 'GET', '/v1/emails?limit=1')).json();
    assert.equal(first.data[0].id, imported.ids.email?.m3);
    assert.equal(first.totalCount, 40);
    assertError(await call(t, world.keys.bob, 'GET', '/v1/emails/eml_00000000000000000000000000'), 404, 'resource_not_found');
  });

  test('at most 500 recipients across to, cc and bcc together; an attachment of up to 20 MiB', async () => {
    const t = ctx();
    const from = w.addresses.full;
    const addresses = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}@example.test`);
    const counts = async () => [(await rows(t, 'emails', w.workspaceId)).length, (await rows(t, 'email_drafts', w.workspaceId)).length];
    const before = await counts();
    for (const op of [send, draft]) {
      const over = sendBody(from, { to: addresses(200, 't'), cc: addresses(200, 'c'), bcc: addresses(101, 'b') });
      assertError(await op(t, w.keys.ann, over), 400, 'invalid_value', 'bcc[100]');
      assertError(await op(t, w.keys.ann, sendBody(from, { to: addresses(300, 't'), cc: addresses(201, 'c') })), 400, 'invalid_value', 'cc[200]');
    }
    assert.deepEqual(await counts(), before, 'nothing refused was stored');
    const edge = sendBody(from, { to: addresses(200, 't'), cc: addresses(200, 'c'), bcc: addresses(100, 'b'), attachments: [w.files.edge] });
    for (const op of [send, draft]) {
      const res = await op(t, w.keys.ann, edge);
      assert.equal(res.statusCode, 200, res.body);
    }
    assert.deepEqual(await counts(), [before[0]! + 1, before[1]! + 1]);
    const item = (await call(t, w.keys.ann, 'GET', '/v1/emails?limit=1')).json().data[0];
    assert.equal(item.fields.$to.value.length + item.fields.$cc.value.length + item.fields.$bcc.value.length, 500);
    assert.deepEqual(item.relationships.$attachment.values, [w.files.edge]);
    assertError(await send(t, w.keys.ann, sendBody(from, { attachments: [w.files.big] })), 400, 'file_too_large', 'attachments[0]');
  });

  test('files: purpose email_attachment takes any valid type up to 20,971,520 bytes (20 MiB)', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const mimeType of ['image/png', 'application/x-custom', 'text/plain; charset=utf-8']) {
      const ok = await call(t, s.secret, 'POST', '/v1/files', { filename: 'a', mimeType, sizeBytes: 20_971_520, purpose: 'email_attachment' });
      assert.equal(ok.statusCode, 200, ok.body);
    }
    assertError(
      await call(t, s.secret, 'POST', '/v1/files', { filename: 'a', mimeType: 'image/png', sizeBytes: 20_971_521, purpose: 'email_attachment' }),
      400,
      'file_too_large',
      'sizeBytes',
    );
    assertError(
      await call(t, s.secret, 'POST', '/v1/files', { filename: 'a', mimeType: 'nope', sizeBytes: 1, purpose: 'email_attachment' }),
      400,
      'invalid_value',
      'mimeType',
    );
  });
});
