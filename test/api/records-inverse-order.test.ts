// An inverse relationship written from its own end (an account's `$contact`, which writes its
// contacts' `$account` rows) on both databases: it is answered in its sources' order, whatever
// order the body names them in, so naming the linked ids again in another order changes nothing
// (docs/records.md §The API, §Writing relationships), and an event's `to` is the order the API
// shows (docs/events.md §Shape).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';

eachDialect('an inverse relationship written in another order', (ctx) => {
  async function ok(secret: string, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await call(ctx(), secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function updates(workspaceId: string) {
    const rows = await ctx().deps.db.kysely.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(r.body)).filter((e) => e.type === 'account.updated');
  }
  const pause = () => new Promise((r) => setTimeout(r, 5));

  test("the same contacts in another order leave the account and its contacts as they were; an event's to is the answered order", async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const older = await ok(s.secret, 'POST', '/v1/contacts', { fields: {} });
    const newer = await ok(s.secret, 'POST', '/v1/contacts', { fields: {} });
    const url = `/v1/accounts/${acc.id}`;

    const linked = await ok(s.secret, 'POST', url, { relationships: { $contact: { add: [newer.id, older.id] } } });
    assert.deepEqual(linked.relationships.$contact.values, [older.id, newer.id]);
    const [added] = await updates(s.workspaceId);
    assert.deepEqual(added.data.changes.$contact, { from: [], to: [older.id, newer.id] });
    assert.deepEqual(added.data.object.relationships.$contact.values, added.data.changes.$contact.to);
    const contacts = await Promise.all([older, newer].map((c) => ok(s.secret, 'GET', `/v1/contacts/${c.id}`)));

    await pause();
    const same = await ok(s.secret, 'POST', url, { relationships: { $contact: { replace: [newer.id, older.id] } } });
    assert.deepEqual(same.relationships.$contact.values, [older.id, newer.id]);
    assert.equal(same.updatedAt, linked.updatedAt);
    assert.equal((await updates(s.workspaceId)).length, 1, 'a write that changes nothing appends nothing');
    for (const c of contacts) assert.equal((await ok(s.secret, 'GET', `/v1/contacts/${c.id}`)).updatedAt, c.updatedAt);

    // One contact fewer: the change is the answered order less that contact.
    await pause();
    const third = await ok(s.secret, 'POST', '/v1/contacts', { fields: {} });
    const moved = await ok(s.secret, 'POST', url, { relationships: { $contact: { replace: [third.id, newer.id] } } });
    assert.deepEqual(moved.relationships.$contact.values, [newer.id, third.id]);
    const last = (await updates(s.workspaceId)).at(-1);
    assert.deepEqual(last.data.changes.$contact, { from: [older.id, newer.id], to: [newer.id, third.id] });
  });
});
