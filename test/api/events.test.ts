// Events of the writes outside the record engine (docs/events.md §Types), on both databases:
// lists (created, updated, members added and removed, nothing for a change that changes nothing),
// meetings (created, updated, at FULL access), file.completed and email.sent, and nothing for a
// completion or a send that fails or changes nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { addMailbox } from '../../src/mailboxes/service.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { meetingBody, pendingTranscript, transcript } from '../helpers/meetings.ts';

eachDialect('events of lists, meetings, files and e-mails', (ctx) => {
  async function events(workspaceId: string) {
    const rows = await ctx().deps.db.kysely.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(r.body));
  }
  async function ok(secret: string, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await call(ctx(), secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }

  test('lists: created with members, renamed, members added and removed; a no-op appends nothing', async () => {
    const s = await seedWorkspace(ctx());
    const [a, b] = [await ok(s.secret, 'POST', '/v1/contacts', { fields: {} }), await ok(s.secret, 'POST', '/v1/contacts', { fields: {} })];
    const list = await ok(s.secret, 'POST', '/v1/lists', { fields: { $name: 'VIP', $objectType: 'contact' }, relationships: { $contacts: [a.id] } });
    await ok(s.secret, 'POST', `/v1/lists/${list.id}`, { fields: { $name: 'VIPs' }, relationships: { $contacts: { add: [a.id, b.id] } } });
    await ok(s.secret, 'POST', `/v1/lists/${list.id}`, { relationships: { $contacts: { remove: [a.id] } } });
    await ok(s.secret, 'POST', `/v1/lists/${list.id}`, { fields: { $name: 'VIPs' }, relationships: { $contacts: { add: [b.id] } } });
    const evs = (await events(s.workspaceId)).filter((e) => e.type.startsWith('list.'));
    assert.deepEqual(
      evs.map((e) => [e.type, e.data.members ?? e.data.changes ?? null]),
      [
        ['list.created', null],
        ['list.members_added', [a.id]],
        ['list.updated', { $name: { from: 'VIP', to: 'VIPs' } }],
        ['list.members_added', [b.id]],
        ['list.members_removed', [a.id]],
      ],
    );
    assert.deepEqual(evs[0].data.object, list);
    assert.equal(evs[2].data.object.fields.$name.value, 'VIPs');
  });

  test('meetings at FULL access, file.completed, email.sent', async () => {
    const s = await seedWorkspace(ctx());
    const file = await transcript(ctx(), s.secret, 'the call');
    const m = await ok(s.secret, 'POST', '/v1/meetings', meetingBody({ $description: 'secret plans', $privacySetting: 'FULL' }));
    await ok(s.secret, 'POST', `/v1/meetings/${m.id}`, { fields: { $privacySetting: 'FULL' } });
    await ok(s.secret, 'POST', `/v1/meetings/${m.id}`, { fields: { $privacySetting: 'METADATA' }, relationships: { $transcript: { replace: file } } });
    const me = (await ctx().deps.db.kysely.selectFrom('users').select('email').where('id', '=', s.userId).executeTakeFirstOrThrow()).email;
    await addMailbox(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { user: s.userId, address: me });
    await ok(s.secret, 'POST', '/v1/emails/send', { from: me, to: ['x@example.test'], subject: 'Hi', messageBody: { content: '<p>hello</p>' } });
    const evs = await events(s.workspaceId);
    assert.deepEqual(
      evs.map((e) => e.type),
      ['file.completed', 'meeting.created', 'meeting.updated', 'email.sent'],
    );
    assert.equal(evs[0].data.object.id, file);
    assert.equal(evs[0].data.object.status, 'COMPLETED');
    assert.equal(evs[1].data.object.accessLevel, 'FULL');
    assert.equal(evs[1].data.object.fields.$description.value, 'secret plans');
    assert.deepEqual(evs[2].data.changes, { $privacySetting: { from: 'FULL', to: 'METADATA' }, $transcript: { from: [], to: [file] } });
    assert.equal(evs[3].data.object.fields.$subject.value, 'Hi');
    assert.equal(evs[3].data.object.fields.$body.value, '<p>hello</p>');
  });
  test('nothing for a completion or a send that fails or changes nothing', async () => {
    const s = await seedWorkspace(ctx());
    const done = await transcript(ctx(), s.secret, 'done');
    const pending = await pendingTranscript(ctx(), s.secret);
    const completed = async () => (await events(s.workspaceId)).filter((e) => e.type === 'file.completed').map((e) => e.data.object.id);
    assert.deepEqual(await completed(), [done]);
    // Completing a COMPLETED file again, and a completion refused for its checksum.
    await ok(s.secret, 'POST', `/v1/files/${done}/complete`, {});
    const refused = await call(ctx(), s.secret, 'POST', `/v1/files/${pending}/complete`, { md5: '0'.repeat(32) });
    assert.equal(refused.json().error?.code, 'checksum_mismatch', refused.body);
    assert.deepEqual(await completed(), [done]);
    await ok(s.secret, 'POST', `/v1/files/${pending}/complete`, {});
    assert.deepEqual(await completed(), [done, pending]);

    // A send from an address that is no mailbox of the sender, and one with a PENDING attachment.
    const me = (await ctx().deps.db.kysely.selectFrom('users').select('email').where('id', '=', s.userId).executeTakeFirstOrThrow()).email;
    await addMailbox(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { user: s.userId, address: me });
    const body = { to: ['x@example.test'], subject: 'Hi', messageBody: { content: '<p>hello</p>' } };
    const other = await pendingTranscript(ctx(), s.secret);
    for (const bad of [
      { ...body, from: 'someone.else@example.test' },
      { ...body, from: me, attachments: [other] },
    ]) {
      const res = await call(ctx(), s.secret, 'POST', '/v1/emails/send', bad);
      assert.ok(res.statusCode >= 400, res.body);
    }
    assert.deepEqual(
      (await events(s.workspaceId)).filter((e) => e.type === 'email.sent'),
      [],
    );
  });
});
