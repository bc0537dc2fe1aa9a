// A merge changes the records around its two (docs/merge.md §Links): a record whose link named the
// duplicate now names the primary, and a record the primary now links to in the duplicate's place
// lists the primary; each shows a change as the API shows it, so its updatedAt moves, as a write
// of that link through the API would move it (docs/records.md §Writing relationships). A record the
// merge does not touch keeps its updatedAt.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

type Entity = { id: string; updatedAt: string; relationships: Record<string, { values: string[] }> };

eachDialect('merge and the updatedAt of linked records', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown): Promise<Entity> {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json<Entity>();
  }
  const stamp = async (s: Seeded, path: string) => (await ok(s, 'GET', path)).updatedAt;

  test('records whose links named the duplicate move their updatedAt; the others keep it', async () => {
    const s = await seedWorkspace(ctx());
    const primary = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const duplicate = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme Inc' } });
    const other = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Beta' } });
    const contact = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: duplicate.id } });
    const note = await ok(s, 'POST', '/v1/notes', { fields: { $title: 'Call' }, relationships: { $account: duplicate.id } });
    const bystander = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Bob' } }, relationships: { $account: other.id } });
    const before = {
      contact: await stamp(s, `/v1/contacts/${contact.id}`),
      note: await stamp(s, `/v1/notes/${note.id}`),
      bystander: await stamp(s, `/v1/contacts/${bystander.id}`),
      other: await stamp(s, `/v1/accounts/${other.id}`),
    };
    await sleep(5);
    await ok(s, 'POST', '/v1/accounts/merge', { primaryId: primary.id, duplicateId: duplicate.id });

    const movedContact = await ok(s, 'GET', `/v1/contacts/${contact.id}`);
    assert.deepEqual(movedContact.relationships.$account?.values, [primary.id]);
    assert.ok(movedContact.updatedAt > before.contact, `the contact's updatedAt moves: ${before.contact} → ${movedContact.updatedAt}`);
    const movedNote = await ok(s, 'GET', `/v1/notes/${note.id}`);
    assert.deepEqual(movedNote.relationships.$account?.values, [primary.id]);
    assert.ok(movedNote.updatedAt > before.note, `the note's updatedAt moves: ${before.note} → ${movedNote.updatedAt}`);
    assert.equal(await stamp(s, `/v1/contacts/${bystander.id}`), before.bystander);
    assert.equal(await stamp(s, `/v1/accounts/${other.id}`), before.other);
  });

  test('a record the primary now links to in the duplicate’s place moves its updatedAt', async () => {
    const s = await seedWorkspace(ctx());
    const account = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const primary = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } } });
    const duplicate = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: account.id } });
    const before = await stamp(s, `/v1/accounts/${account.id}`);
    await sleep(5);
    await ok(s, 'POST', '/v1/contacts/merge', { primaryId: primary.id, duplicateId: duplicate.id });
    const after = await ok(s, 'GET', `/v1/accounts/${account.id}`);
    assert.deepEqual(after.relationships.$contact?.values, [primary.id]);
    assert.ok(after.updatedAt > before, `the account's updatedAt moves: ${before} → ${after.updatedAt}`);
  });
});
