// One e-mail address is one value whichever form its domain is written in (docs/records.md §E-mail
// addresses), through HTTP on both databases: `ann@bücher.example` and `ann@xn--bcher-kva.example`
// are one value for a unique field (409 for the other form, either way round), a `contains`
// filter in either spelling finds both, and a meeting with the ASCII address (meetings take no
// other) links the contact stored with the Unicode one, makes no contact for it or for a member
// whose address is written in Unicode, and shows that member the meeting at FULL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKey } from '../../src/auth/service.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createUser } from '../../src/users/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

const UNICODE = 'ann@bücher.example';
const ASCII = 'ann@xn--bcher-kva.example';

eachDialect('e-mail addresses with an internationalized domain', (ctx) => {
  async function post(s: Seeded, url: string, body: unknown) {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return res.json<{ id: string; fields: Record<string, { value: unknown }>; relationships: Record<string, { values: string[] }> }>();
  }
  /** The ids a filtered listing answers, sorted, checking that totalCount counts each once. */
  async function ids(s: Seeded, path: string, key: string, value: string): Promise<string[]> {
    const res = await call(ctx(), s.secret, 'GET', `${path}?${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    assert.equal(res.statusCode, 200, `${key}=${value}: ${res.body}`);
    const out = res.json().data.map((d: { id: string }) => d.id);
    assert.equal(res.json().totalCount, out.length, `${key}=${value} totalCount`);
    assert.equal(new Set(out).size, out.length, `${key}=${value} answers each record once`);
    return out.sort();
  }

  test('a unique EMAIL field refuses the other form of an address it holds, either way round', async () => {
    const s = await seedWorkspace(ctx());
    await addField(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { objectType: 'contact', key: 'work', label: 'Work', valueType: 'EMAIL', unique: true });
    const a = await post(s, '/v1/contacts', { fields: { work: UNICODE } });
    assert.equal(a.fields.work!.value, UNICODE, 'stored and answered as written');
    for (const other of [ASCII, 'ANN@XN--BCHER-KVA.EXAMPLE', 'Ann@BÜCHER.example']) {
      const res = await call(ctx(), s.secret, 'POST', '/v1/contacts', { fields: { work: other } });
      assert.equal(res.statusCode, 409, `${other}: ${res.body}`);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['duplicate_value', 'fields.work']);
    }
    // The record itself may take the other form.
    assert.equal((await post(s, `/v1/contacts/${a.id}`, { fields: { work: ASCII } })).fields.work!.value, ASCII);
    const res = await call(ctx(), s.secret, 'POST', '/v1/contacts', { fields: { work: UNICODE } });
    assert.equal(res.statusCode, 409, res.body);
    // A domain IDNA refuses is kept and compared as written, folded.
    await post(s, '/v1/contacts', { fields: { work: 'bo@bü%cher.example' } });
    assert.equal((await call(ctx(), s.secret, 'POST', '/v1/contacts', { fields: { work: 'BO@BÜ%CHER.example' } })).statusCode, 409);
  });

  test('contains finds either spelling of the domain, whichever form is stored', async () => {
    const s = await seedWorkspace(ctx());
    await addField(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { objectType: 'contact', key: 'work', label: 'Work', valueType: 'EMAIL' });
    const u = (await post(s, '/v1/contacts', { fields: { $email: [UNICODE], work: UNICODE } })).id;
    const a = (await post(s, '/v1/contacts', { fields: { $email: [ASCII], work: ASCII } })).id;
    const other = (await post(s, '/v1/contacts', { fields: { $email: ['ann@buecher.example'], work: 'bo@acme.example' } })).id;
    const both = [u, a].sort();
    for (const field of ['$email', 'work'])
      for (const needle of [UNICODE, ASCII, 'ANN@BÜCHER.EXAMPLE', '@bücher', 'bücher.ex', 'büch', 'xn--bcher-kva', 'XN--BCHER', 'bü'])
        assert.deepEqual(await ids(s, '/v1/contacts', `${field}[contains]`, needle), both, `${field} ${needle}`);
    assert.deepEqual(await ids(s, '/v1/contacts', '$email[-contains]', 'bücher'), [other]);
    assert.deepEqual(await ids(s, '/v1/contacts', 'work[-contains]', 'xn--bcher'), [other]);
    // A short needle is read without a trigram: each record still comes once.
    assert.deepEqual(await ids(s, '/v1/contacts', 'work[contains]', 'an'), both);
  });

  test('a meeting with the ASCII address links the contact stored with the Unicode one and makes no record for it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    const bo = await createUser(op, { email: 'bo@Bücher.example', role: 'member' });
    const boKey = (await createKey(op, { userId: bo.id, scopes: null, expiresInMs: null })).secret;
    const acme = await post(s, '/v1/accounts', { fields: { $name: 'Bücher', $website: ['https://bücher.example'] } });
    const ann = await post(s, '/v1/contacts', { fields: { $email: [UNICODE] }, relationships: { $account: acme.id } });
    const meeting = await post(s, '/v1/meetings', {
      fields: {
        $title: 'Kick-off',
        $startDate: '2026-01-05T10:00:00Z',
        $endDate: '2026-01-05T11:00:00Z',
        $organizerEmail: 'bo@xn--bcher-kva.example',
        $attendeeEmails: ['ANN@xn--bcher-kva.example'],
        $privacySetting: 'METADATA',
      },
      autoCreateRecords: true,
    });
    assert.deepEqual(meeting.relationships.$contact!.values, [ann.id]);
    assert.deepEqual(meeting.relationships.$account!.values, [acme.id]);
    assert.deepEqual((await call(t, s.secret, 'GET', `/v1/contacts/${ann.id}`)).json().relationships.$meeting.values, [meeting.id]);
    // Neither the contact's address nor the member's made a contact, nor its domain an account.
    const contacts = (await call(t, s.secret, 'GET', '/v1/contacts')).json().data.map((c: { id: string }) => c.id);
    assert.deepEqual(contacts, [ann.id]);
    const accounts = (await call(t, s.secret, 'GET', '/v1/accounts')).json().data.map((c: { id: string }) => c.id);
    assert.deepEqual(accounts, [acme.id]);
    // The organizer, a member whose address is written with the Unicode domain, reads it at FULL.
    const seen = await call(t, boKey, 'GET', `/v1/meetings/${meeting.id}`);
    assert.equal(seen.statusCode, 200, seen.body);
    assert.equal(seen.json().accessLevel, 'FULL');
  });
});
