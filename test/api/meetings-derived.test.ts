// The derived `$meeting` relationship of records (docs/meetings.md, docs/records.md §Definitions)
// through HTTP on both databases: a contact shows the meetings its addresses attended, its account
// and the account's opportunities show them too, and a later change of the contact's e-mail moves
// them, since the relationship is computed when read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('derived $meeting on records', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json<{ id: string; relationships: Record<string, { values: string[] }> }>();
  }

  test('contacts, their accounts and those accounts’ opportunities show the meetings their addresses attended', async () => {
    const s = await seedWorkspace(ctx());
    const acme = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const ann = await ok(s, 'POST', '/v1/contacts', { fields: { $email: ['Ann@Acme.test'] }, relationships: { $account: acme.id } });
    const deal = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acme.id } });
    const other = await ok(s, 'POST', '/v1/contacts', { fields: { $email: ['bo@elsewhere.test'] } });
    const meeting = await ok(s, 'POST', '/v1/meetings', {
      fields: { $title: 'Kick-off', $startDate: '2026-01-05T10:00:00Z', $endDate: '2026-01-05T11:00:00Z', $attendeeEmails: ['ann@acme.TEST'] },
    });
    const meetingsOf = async (path: string) => (await ok(s, 'GET', path)).relationships.$meeting!.values;
    assert.deepEqual(await meetingsOf(`/v1/contacts/${ann.id}`), [meeting.id]);
    assert.deepEqual(await meetingsOf(`/v1/accounts/${acme.id}`), [meeting.id]);
    assert.deepEqual(await meetingsOf(`/v1/opportunities/${deal.id}`), [meeting.id]);
    assert.deepEqual(await meetingsOf(`/v1/contacts/${other.id}`), []);

    await ok(s, 'POST', `/v1/contacts/${ann.id}`, { fields: { $email: ['ann@new.test'] } });
    await ok(s, 'POST', `/v1/contacts/${other.id}`, { fields: { $email: ['ann@acme.test'] } });
    assert.deepEqual(await meetingsOf(`/v1/contacts/${ann.id}`), []);
    assert.deepEqual(await meetingsOf(`/v1/accounts/${acme.id}`), []);
    assert.deepEqual(await meetingsOf(`/v1/contacts/${other.id}`), [meeting.id]);
    const listed = await ok(s, 'GET', '/v1/contacts');
    const row = (listed as unknown as { data: { id: string; relationships: Record<string, { values: string[] }> }[] }).data.find((c) => c.id === other.id)!;
    assert.deepEqual(row.relationships.$meeting!.values, [meeting.id]);
  });
});
