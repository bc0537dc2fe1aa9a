// autoCreateRecords (docs/meetings.md §Records created for attendees) on both databases: an
// unknown attendee domain that is no public mail provider becomes one account, which the new
// contacts of that domain are linked to; a known domain or a mail provider's makes none; a refused
// create makes none; the account is a record like any other (listed, counted, found by host, its
// created event and starting history written as for a create through the API).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { isMailProvider } from '../../src/meetings/mail-providers.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { assertError } from '../helpers/files.ts';
import { checkedCall, meetingBody } from '../helpers/meetings.ts';
import { loadDocument, type Operation, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';

test('public mail providers, with their domains per country, are recognised; company domains are not', () => {
  for (const d of ['gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.co.uk', 'yahoo.fr', 'gmx.de', 'web.de', 'icloud.com', 'proton.me', 'qq.com'])
    assert.equal(isMailProvider(d), true, d);
  for (const d of ['globex.test', 'acme.com', 'mail.acme.com', 'yahoo-inc.com', 'gmail.acme.com', 'outlookgroup.com'])
    assert.equal(isMailProvider(d), false, d);
});

eachDialect('meetings: accounts for attendee domains', (ctx) => {
  let ops: Map<string, Operation>;
  const checker = responseChecker();
  before(async () => {
    ops = new Map(operationsOf(await loadDocument(ctx())).map((o) => [o.operationId, o]));
  });

  test('an unknown domain becomes one account linked to its new contacts; a known or a provider domain none', async () => {
    const t = ctx();
    const call = checkedCall(t, ops, checker);
    const s = await seedWorkspace(t);
    const made = await call(s.secret, 'createAccount', 'POST', '/v1/accounts', { fields: { $name: 'Globex', $website: ['https://globex.test'] } });
    const globex = made.json().id as string;
    const body = meetingBody(
      { $organizerEmail: 'ann@Initech.test', $attendeeEmails: ['bob@initech.test', 'hank@globex.test', 'solo@gmail.com', 'kim@hotmail.co.uk'] },
      { autoCreateRecords: true },
    );
    const m = (await call(s.secret, 'createMeeting', 'POST', '/v1/meetings', body)).json();
    const accounts = (await call(s.secret, 'listAccounts', 'GET', '/v1/accounts')).json();
    assert.equal(accounts.totalCount, 2, 'one account made, for initech.test only');
    const initech = accounts.data.find((a: any) => a.id !== globex);
    assert.deepEqual(initech.fields.$name, { value: 'initech.test', valueType: 'TEXT' });
    assert.deepEqual(initech.fields.$website.value, ['https://initech.test']);
    assert.deepEqual(m.relationships.$account.values, [globex, initech.id].sort());

    const contacts = (await call(s.secret, 'listContacts', 'GET', '/v1/contacts')).json().data;
    const byEmail = new Map(contacts.map((c: any) => [c.fields.$email.value[0], c]));
    const accountsOf = (email: string) => (byEmail.get(email) as any).relationships.$account.values;
    assert.deepEqual(accountsOf('ann@Initech.test'), [initech.id]);
    assert.deepEqual(accountsOf('bob@initech.test'), [initech.id]);
    assert.deepEqual(accountsOf('hank@globex.test'), [globex]);
    assert.deepEqual(accountsOf('solo@gmail.com'), []);
    assert.deepEqual(accountsOf('kim@hotmail.co.uk'), []);
    const seen = (await call(s.secret, 'getAccount', 'GET', `/v1/accounts/${initech.id}`)).json();
    assert.deepEqual(
      [...seen.relationships.$contact.values].sort(),
      [(byEmail.get('ann@Initech.test') as any).id, (byEmail.get('bob@initech.test') as any).id].sort(),
    );

    // The new account is found by its website's host: a later newcomer of that domain joins it.
    const later = meetingBody({ $attendeeEmails: ['eve@initech.test'] }, { autoCreateRecords: true });
    await call(s.secret, 'createMeeting', 'POST', '/v1/meetings', later);
    assert.equal((await call(s.secret, 'listAccounts', 'GET', '/v1/accounts')).json().totalCount, 2);
    const eve = (await call(s.secret, 'listContacts', 'GET', '/v1/contacts?limit=1')).json().data[0];
    assert.deepEqual(eve.fields.$email.value, ['eve@initech.test']);
    assert.deepEqual(eve.relationships.$account.values, [initech.id]);
  });

  test('without autoCreateRecords, or on a refused create, no account is made', async () => {
    const t = ctx();
    const call = checkedCall(t, ops, checker);
    const s = await seedWorkspace(t);
    await call(s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: ['a@umbrella.test'] }));
    const future = meetingBody({ $attendeeEmails: ['b@umbrella.test'], $endDate: new Date(Date.now() + 60_000).toISOString() }, { autoCreateRecords: true });
    assertError(await call(s.secret, 'createMeeting', 'POST', '/v1/meetings', future), 400, 'invalid_value');
    assert.equal((await call(s.secret, 'listAccounts', 'GET', '/v1/accounts')).json().totalCount, 0);
    assert.equal((await call(s.secret, 'listContacts', 'GET', '/v1/contacts')).json().totalCount, 0);
  });
});

eachDialect('meetings: accounts for attendee domains in the change log', (ctx) => {
  // docs/events.md §Types and docs/history.md §Storage: an account a meeting creates is a create
  // like the API's: its `account.created` event and its starting snapshot (isCreate).
  test('the account made gets its created event, and its history starts with its first values', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const get = async (url: string, body?: unknown) => {
      const res = await call(t, s.secret, body === undefined ? 'GET' : 'POST', url, body);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      return res.json();
    };
    await get('/v1/meetings', meetingBody({ $attendeeEmails: ['amy@zzcorp.test'] }, { autoCreateRecords: true }));
    const [account] = (await get('/v1/accounts')).data;
    const [contact] = (await get('/v1/contacts')).data;
    const rows = await t.deps.db.kysely.selectFrom('events').selectAll().where('workspace_id', '=', s.workspaceId).orderBy('seq').execute();
    const evs = rows.map((r) => JSON.parse(r.body));
    assert.deepEqual(
      evs.map((e) => e.type),
      ['account.created', 'contact.created', 'meeting.created'],
    );
    assert.deepEqual(evs[0].data.object, account);
    assert.equal(evs[1].data.object.id, contact.id);

    await get(`/v1/accounts/${account.id}`, { fields: { $name: 'ZZ Corp' } });
    const names = await get(`/v1/accounts/${account.id}/fields/$name/history`);
    assert.deepEqual(
      names.data.map((e: any) => [e.value, e.isCreate]),
      [
        ['ZZ Corp', false],
        ['zzcorp.test', true],
      ],
    );
    assert.equal(names.data[1].recordedAt, account.createdAt);
    const sites = await get(`/v1/accounts/${account.id}/fields/$website/history`);
    assert.deepEqual(sites.data, [
      { value: ['https://zzcorp.test'], valueType: 'URL', displayValue: 'https://zzcorp.test', recordedAt: account.createdAt, isCreate: true },
    ]);
  });
});
