// Events and history of the trash and of merges (docs/events.md §Types, docs/history.md), on both
// databases: a delete appends `<type>.deleted` with the resource as it was, a restore
// `<type>.restored`, a merge one `<type>.merged` naming both records with the primary's changes,
// and the primary's history records the values the merge changed; a re-delete appends nothing. The
// list memberships a delete, a restore or a merge moves append the lists' member events.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { meetingBody } from '../helpers/meetings.ts';
import { write } from '../../src/db/write.ts';

eachDialect('events of deletes, restores and merges', (ctx) => {
  async function events(workspaceId: string) {
    const rows = await ctx().deps.db.kysely.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(r.body));
  }
  async function ok(secret: string, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }

  test('a delete, a second delete and a restore', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Gone' } });
    const deleted = await ok(s.secret, 'DELETE', `/v1/accounts/${acc.id}`);
    await ok(s.secret, 'DELETE', `/v1/accounts/${acc.id}`);
    const db = ctx().deps.db.kysely;
    await write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: acc.id }));
    const evs = await events(s.workspaceId);
    assert.deepEqual(
      evs.map((e) => e.type),
      ['account.created', 'account.deleted', 'account.restored'],
    );
    assert.deepEqual(evs[1].data.object, deleted);
    assert.equal(evs[2].data.object.id, acc.id);
    assert.equal(evs[2].actor.type, 'operator');
  });

  test('a merge: one event naming both records, and the primary history of what it changed', async () => {
    const s = await seedWorkspace(ctx());
    const primary = await ok(s.secret, 'POST', '/v1/contacts', { fields: { $email: ['p@x.test'] } });
    const duplicate = await ok(s.secret, 'POST', '/v1/contacts', { fields: { $email: ['d@x.test'], $profilePhotoUrl: 'https://x.test/d.png' } });
    await ok(s.secret, 'POST', '/v1/contacts/merge', { primaryId: primary.id, duplicateId: duplicate.id });
    const merged = (await events(s.workspaceId)).filter((e) => e.type === 'contact.merged');
    assert.equal(merged.length, 1);
    assert.equal(merged[0].data.object.id, primary.id);
    assert.equal(merged[0].data.duplicateId, duplicate.id);
    assert.deepEqual(merged[0].data.changes.$profilePhotoUrl, { from: null, to: 'https://x.test/d.png' });
    const history = await ok(s.secret, 'GET', `/v1/contacts/${primary.id}/fields/$profilePhotoUrl/history`);
    assert.deepEqual(
      history.data.map((h: { value: unknown; isCreate: boolean }) => [h.value, h.isCreate]),
      [
        ['https://x.test/d.png', false],
        [null, true],
      ],
    );
  });
  test("a merge's changes name the relationships the primary took from the duplicate, as the API shows them", async () => {
    const s = await seedWorkspace(ctx());
    const [acc, other] = [
      await ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A' } }),
      await ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'B' } }),
    ];
    const primary = await ok(s.secret, 'POST', '/v1/contacts', { fields: { $email: ['p@x.test'] }, relationships: { $account: [other.id] } });
    const duplicate = await ok(s.secret, 'POST', '/v1/contacts', { fields: {}, relationships: { $account: [acc.id, other.id] } });
    const note = await ok(s.secret, 'POST', '/v1/notes', { fields: { $title: 'n' }, relationships: { $contact: [duplicate.id] } });
    const { primary: after } = await ok(s.secret, 'POST', '/v1/contacts/merge', { primaryId: primary.id, duplicateId: duplicate.id });
    const [merged] = (await events(s.workspaceId)).filter((e) => e.type === 'contact.merged');
    // Nothing but links moved: the fields are the primary's, the relationships it gained are named
    // (docs/events.md §Shape), and those it held already are not.
    assert.deepEqual(merged.data.changes, {
      $account: { from: [other.id], to: after.relationships.$account.values },
      $note: { from: [], to: [note.id] },
    });
    assert.deepEqual([...after.relationships.$account.values].sort(), [acc.id, other.id].sort());
    assert.deepEqual(merged.data.object, after);
  });

  test("a merge's changes never name a derived relationship ($meeting), as an update's do not", async () => {
    const s = await seedWorkspace(ctx());
    const meeting = await ok(s.secret, 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: ['d@x.test'] }));
    const primary = await ok(s.secret, 'POST', '/v1/contacts', { fields: { $email: ['p@x.test'] } });
    const duplicate = await ok(s.secret, 'POST', '/v1/contacts', { fields: { $email: ['d@x.test'] } });
    const { primary: after } = await ok(s.secret, 'POST', '/v1/contacts/merge', { primaryId: primary.id, duplicateId: duplicate.id });
    // The primary now shows the duplicate's meeting, computed from the address it took: the event
    // names the address, not the meetings it reads as (docs/events.md §Shape).
    assert.deepEqual(after.relationships.$meeting.values, [meeting.id]);
    const merged = (await events(s.workspaceId)).filter((e) => e.type === 'contact.merged');
    assert.deepEqual(merged[0].data.changes, { $email: { from: ['p@x.test'], to: ['p@x.test', 'd@x.test'] } });
    assert.deepEqual(merged[0].data.object, after);
    // An update that takes the address away again names the address alone too.
    await ok(s.secret, 'POST', `/v1/contacts/${primary.id}`, { fields: { $email: ['p@x.test'] } });
    const [updated] = (await events(s.workspaceId)).filter((e) => e.type === 'contact.updated');
    assert.deepEqual(updated.data.changes, { $email: { from: ['p@x.test', 'd@x.test'], to: ['p@x.test'] } });

    // Accounts: the primary takes the duplicate's contact (a link, named) and with it the
    // contact's meetings (derived, not named).
    await ok(s.secret, 'POST', `/v1/contacts/${primary.id}`, { fields: { $email: ['p@x.test', 'd@x.test'] } });
    const [a1, a2] = [
      await ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A1' } }),
      await ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A2' } }),
    ];
    await ok(s.secret, 'POST', `/v1/contacts/${primary.id}`, { relationships: { $account: { add: [a2.id] } } });
    const { primary: account } = await ok(s.secret, 'POST', '/v1/accounts/merge', { primaryId: a1.id, duplicateId: a2.id });
    assert.deepEqual(account.relationships.$meeting.values, [meeting.id]);
    const [accountMerged] = (await events(s.workspaceId)).filter((e) => e.type === 'account.merged');
    assert.deepEqual(accountMerged.data.changes, { $contact: { from: [], to: [primary.id] } });
  });

  test('a restore appends the resource as it is retrieved after the restore, with the links that came back', async () => {
    const s = await seedWorkspace(ctx());
    const db = ctx().deps.db.kysely;
    const back = (id: string) => write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }));
    const restored = async (id: string) => (await events(s.workspaceId)).filter((e) => e.type.endsWith('.restored') && e.data.object.id === id);
    const [a, b] = [
      await ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A' } }),
      await ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'B' } }),
    ];
    const linked = await ok(s.secret, 'POST', '/v1/contacts', { fields: { $email: ['k@x.test'] }, relationships: { $account: [a.id] } });
    const other = await ok(s.secret, 'POST', '/v1/contacts', { fields: { $email: ['o@x.test'] }, relationships: { $account: [b.id] } });
    const meeting = await ok(s.secret, 'POST', '/v1/meetings', {
      fields: { $title: 'Call', $startDate: '2025-02-01T10:00:00Z', $endDate: '2025-02-01T11:00:00Z', $attendeeEmails: ['o@x.test'] },
    });
    assert.deepEqual(meeting.relationships.$contact.values, [other.id]);

    // Its account merged into another while the contact was in the trash: it comes back linked to
    // the primary, and its event names the primary, never the merged-away id.
    await ok(s.secret, 'DELETE', `/v1/contacts/${linked.id}`);
    await ok(s.secret, 'POST', '/v1/accounts/merge', { primaryId: b.id, duplicateId: a.id });
    await back(linked.id);
    const contact = await ok(s.secret, 'GET', `/v1/contacts/${linked.id}`);
    assert.deepEqual(contact.relationships.$account.values, [b.id]);
    assert.deepEqual(
      (await restored(linked.id)).map((e) => e.data.object),
      [contact],
    );

    // A contact of the account, and the meeting's contact, went to the trash meanwhile: neither
    // shows it.
    await ok(s.secret, 'DELETE', `/v1/accounts/${b.id}`);
    await ok(s.secret, 'DELETE', `/v1/meetings/${meeting.id}`);
    await ok(s.secret, 'DELETE', `/v1/contacts/${other.id}`);
    await back(b.id);
    await back(meeting.id);
    const account = await ok(s.secret, 'GET', `/v1/accounts/${b.id}`);
    assert.deepEqual(account.relationships.$contact.values, [linked.id]);
    assert.deepEqual(
      (await restored(b.id)).map((e) => e.data.object),
      [account],
    );
    const held = await ok(s.secret, 'GET', `/v1/meetings/${meeting.id}`);
    assert.deepEqual(held.relationships.$contact.values, []);
    assert.deepEqual(
      (await restored(meeting.id)).map((e) => e.data.object),
      [held],
    );
  });

  test("memberships a delete, a restore and a merge move: the lists' member events", async () => {
    const s = await seedWorkspace(ctx());
    const [a, b] = [await ok(s.secret, 'POST', '/v1/contacts', { fields: {} }), await ok(s.secret, 'POST', '/v1/contacts', { fields: {} })];
    const one = await ok(s.secret, 'POST', '/v1/lists', { fields: { $name: 'One', $objectType: 'contact' }, relationships: { $contacts: [a.id] } });
    const two = await ok(s.secret, 'POST', '/v1/lists', { fields: { $name: 'Two', $objectType: 'contact' }, relationships: { $contacts: [a.id, b.id] } });
    const seen = (await events(s.workspaceId)).length;
    const since = async () => (await events(s.workspaceId)).slice(seen).map((e) => [e.type, e.data.object.id, e.data.members ?? null]);
    const members = async (list: string) => (await ok(s.secret, 'GET', `/v1/lists/${list}/contacts`)).data.map((r: { id: string }) => r.id).sort();

    await ok(s.secret, 'DELETE', `/v1/contacts/${a.id}`);
    const db = ctx().deps.db.kysely;
    await write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: a.id }));
    await ok(s.secret, 'POST', '/v1/contacts/merge', { primaryId: b.id, duplicateId: a.id });
    assert.deepEqual(await since(), [
      ['contact.deleted', a.id, null],
      ['list.members_removed', one.id, [a.id]],
      ['list.members_removed', two.id, [a.id]],
      ['contact.restored', a.id, null],
      ['list.members_added', one.id, [a.id]],
      ['list.members_added', two.id, [a.id]],
      ['contact.merged', b.id, null],
      ['list.members_removed', one.id, [a.id]],
      ['list.members_removed', two.id, [a.id]],
      ['list.members_added', one.id, [b.id]],
    ]);
    // Replayed in order, the member events give the lists as their pages show them.
    const mirror = new Map<string, Set<string>>();
    for (const e of await events(s.workspaceId)) {
      if (!e.type.startsWith('list.members_')) continue;
      const set = mirror.get(e.data.object.id) ?? new Set<string>();
      for (const m of e.data.members) {
        if (e.type === 'list.members_added') set.add(m);
        else set.delete(m);
      }
      mirror.set(e.data.object.id, set);
    }
    for (const list of [one.id, two.id]) assert.deepEqual([...(mirror.get(list) ?? [])].sort(), await members(list));
  });
});
