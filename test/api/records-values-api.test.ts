// Values of the original's newest release through HTTP on both databases (docs/records.md §Writing
// fields, §Telephone numbers, §Social handles): one string for a multi-valued field, telephone
// numbers stored as E.164 (national ones in the field's or the workspace's default country), social
// handles stored and answered as profile URLs, and filters that read their values the same way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { setDefaultCountry } from '../../src/workspaces/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('record values', (ctx) => {
  async function ok(s: Seeded, url: string, body: unknown) {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 200, `${url} ${JSON.stringify(body)}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, url: string, body: unknown, param: string) {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
    assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_value', param]);
  }
  async function found(s: Seeded, path: string, key: string, value: string): Promise<string[]> {
    const res = await call(ctx(), s.secret, 'GET', `${path}?${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data.map((d: { id: string }) => d.id);
  }

  test('a multi-valued EMAIL, URL, TELEPHONE or SOCIAL_HANDLE field takes one string, stored as a list of one', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const c = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(c, { objectType: 'contact', key: 'phones', label: 'Phones', valueType: 'TELEPHONE', multipleValues: true });
    await addField(c, {
      objectType: 'contact',
      key: 'profiles',
      label: 'Profiles',
      valueType: 'SOCIAL_HANDLE',
      multipleValues: true,
      handleService: 'LINKEDIN',
    });
    const made = await ok(s, '/v1/contacts', { fields: { $email: 'ann@acme.test', phones: '+49 30 1234567', profiles: '@ann-lee' } });
    assert.deepEqual(made.fields.$email.value, ['ann@acme.test']);
    assert.deepEqual(made.fields.phones.value, ['+49301234567']);
    assert.deepEqual(made.fields.profiles.value, ['https://linkedin.com/in/ann-lee']);
    const acc = await ok(s, '/v1/accounts', { fields: { $name: 'Acme', $website: 'https://acme.test' } });
    assert.deepEqual(acc.fields.$website.value, ['https://acme.test']);
    const updated = await ok(s, `/v1/contacts/${made.id}`, { fields: { $email: 'lee@acme.test' } });
    assert.deepEqual(updated.fields.$email.value, ['lee@acme.test']);
    const read = await call(t, s.secret, 'GET', `/v1/contacts/${made.id}`);
    assert.deepEqual(read.json().fields.$email.value, ['lee@acme.test']);
    // The value index holds it as a list's element: the filters find it.
    assert.deepEqual(await found(s, '/v1/contacts', '$email[contains]', 'lee@'), [made.id]);
    await refused(s, '/v1/contacts', { fields: { $email: 'not an address' } }, 'fields.$email');
    await refused(s, '/v1/contacts', { fields: { phones: 'call me' } }, 'fields.phones');
  });

  test("TELEPHONE: E.164 with ;ext=; a national number is read in the field's, else the workspace's, default country", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const c = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(c, { objectType: 'account', key: 'de_phone', label: 'DE phone', valueType: 'TELEPHONE', defaultCountry: 'DE' });
    await addField(c, { objectType: 'account', key: 'phone', label: 'Phone', valueType: 'TELEPHONE' });
    const a = await ok(s, '/v1/accounts', { fields: { $name: 'A', de_phone: '030 1234567', phone: '+1 202-555-0123 ext. 42' } });
    assert.equal(a.fields.de_phone.value, '+49301234567');
    assert.equal(a.fields.phone.value, '+12025550123;ext=42');
    // No country for `phone` yet: a national number cannot be placed.
    await refused(s, '/v1/accounts', { fields: { $name: 'B', phone: '(202) 555-0123' } }, 'fields.phone');
    await refused(s, '/v1/accounts', { fields: { $name: 'B', phone: '+1 555 0100' } }, 'fields.phone');
    await setDefaultCountry(c, { country: 'us' });
    const b = await ok(s, '/v1/accounts', { fields: { $name: 'B', phone: '(202) 555-0123', de_phone: '0221 1234567' } });
    assert.equal(b.fields.phone.value, '+12025550123');
    assert.equal(b.fields.de_phone.value, '+492211234567', "the field's own country wins over the workspace's");
    await assert.rejects(() => setDefaultCountry(c, { country: 'XX' }));

    // Filters read a number as it is stored: national forms, separators and E.164 all find it.
    for (const [key, value, want] of [
      ['de_phone', '030 1234567', [a.id]],
      ['de_phone[contains]', '+49 30 123', [a.id]],
      ['de_phone', '30-1234', [a.id]],
      // Digits that also read as a short valid DE number (`+491234`, `+49301234`) are still a part
      // of the numbers that hold them.
      ['de_phone[contains]', '1234', [b.id, a.id]],
      ['de_phone[contains]', '301234', [a.id]],
      ['de_phone[contains]', '4930123', [a.id]],
      ['phone', '(202) 555-0123', [b.id, a.id]],
      ['phone', '+1 202 555 0123 x42', [a.id]],
      ['phone[-contains]', 'ext=42', [b.id]],
    ] as const)
      assert.deepEqual(await found(s, '/v1/accounts', key, value), want, `${key}=${value}`);
  });

  test('SOCIAL_HANDLE: a profile URL of the service or a bare handle, answered as the profile URL and filtered as one', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const a = await ok(s, '/v1/accounts', {
      fields: {
        $name: 'A',
        $linkedIn: 'https://www.linkedin.com/company/acme/',
        $twitter: '@acme',
        $facebook: 'acme.inc',
        $instagram: 'instagram.com/acme_hq',
      },
    });
    assert.deepEqual(
      [a.fields.$linkedIn.value, a.fields.$twitter.value, a.fields.$facebook.value, a.fields.$instagram.value],
      ['https://linkedin.com/company/acme', 'https://x.com/acme', 'https://facebook.com/acme.inc', 'https://www.instagram.com/acme_hq'],
    );
    const b = await ok(s, '/v1/accounts', { fields: { $name: 'B', $twitter: 'https://twitter.com/bee' } });
    assert.equal(b.fields.$twitter.value, 'https://x.com/bee');
    await refused(s, '/v1/accounts', { fields: { $name: 'C', $twitter: 'https://linkedin.com/in/ann' } }, 'fields.$twitter');
    await refused(s, '/v1/accounts', { fields: { $name: 'C', $linkedIn: 'two words' } }, 'fields.$linkedIn');
    for (const [key, value, want] of [
      ['$twitter', '@ACME', [a.id]],
      ['$twitter', 'https://mobile.twitter.com/acme', [a.id]],
      ['$twitter', 'acme', [a.id]],
      ['$twitter[startsWith]', 'https://www.x.com/b', [b.id]],
      ['$twitter[startsWith]', 'https://x.com/', [b.id, a.id]],
      ['$twitter[startsWith]', '', [b.id, a.id]],
      ['$linkedIn[-startsWith]', '', [b.id]],
      ['$linkedIn', 'linkedin.com/company/ACME', [a.id]],
    ] as const)
      assert.deepEqual(await found(s, '/v1/accounts', key, value), want, `${key}=${value}`);
  });

  test('length limits count characters, not UTF-16 units: an emoji is one (docs/design.md §Record values)', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const c = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(c, { objectType: 'account', key: 'handle', label: 'Handle', valueType: 'SOCIAL_HANDLE' });
    const name = '😀'.repeat(10_000);
    const a = await ok(s, '/v1/accounts', { fields: { $name: name, $primaryAddress: { city: '😀'.repeat(255) }, handle: '😀'.repeat(255) } });
    assert.equal(a.fields.$name.value, name);
    assert.equal(a.fields.$primaryAddress.value.city, '😀'.repeat(255));
    const n = await ok(s, '/v1/contacts', { fields: { $name: { firstName: 'é'.repeat(200) + '😀'.repeat(55) } } });
    assert.equal(n.fields.$name.value.firstName.length, 310);
    await refused(s, '/v1/accounts', { fields: { $name: '😀'.repeat(10_001) } }, 'fields.$name');
    await refused(s, '/v1/accounts', { fields: { $name: 'A', $primaryAddress: { city: '😀'.repeat(256) } } }, 'fields.$primaryAddress.city');
    await refused(s, '/v1/accounts', { fields: { $name: 'A', handle: '😀'.repeat(256) } }, 'fields.handle');
  });

  test('a required text of white space alone, or a FULL_NAME with no part that is not blank, is refused on create, update and merge', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const a = await ok(s, '/v1/accounts', { fields: { $name: ' Acme ' } });
    assert.equal(a.fields.$name.value, ' Acme ', 'a name with text is kept as written');
    for (const blank of ['', '   ', '\u3000\t']) {
      await refused(s, '/v1/accounts', { fields: { $name: blank } }, 'fields.$name');
      await refused(s, '/v1/opportunities', { fields: { $name: blank, $stage: 'Lead' }, relationships: { $account: a.id } }, 'fields.$name');
    }
    for (const name of [{}, { firstName: null, lastName: null }, { firstName: '  ' }, { firstName: '', lastName: ' ' }])
      await refused(s, '/v1/contacts', { fields: { $name: name } }, 'fields.$name');
    await refused(s, `/v1/accounts/${a.id}`, { fields: { $name: ' ' } }, 'fields.$name');
    const c = await ok(s, '/v1/contacts', { fields: { $name: { firstName: 'Ann', lastName: '' } } });
    await refused(s, `/v1/contacts/${c.id}`, { fields: { $name: {} } }, 'fields.$name');
    const d = await ok(s, '/v1/contacts', { fields: {} });
    await refused(s, '/v1/contacts/merge', { primaryId: c.id, duplicateId: d.id, fieldResolutions: { $name: { value: {} } } }, 'fieldResolutions.$name');
    // null still unsets an optional name; the records are as they were.
    assert.equal((await ok(s, `/v1/contacts/${c.id}`, { fields: { $name: null } })).fields.$name.value, null);
    assert.equal((await call(t, s.secret, 'GET', `/v1/accounts/${a.id}`)).json().fields.$name.value, ' Acme ');
  });

  test('an ADDRESS none of whose members holds more than white space is refused; one member with a value is kept as written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const address of [{}, { street: '' }, { city: '  ', street2: null }])
      await refused(s, '/v1/accounts', { fields: { $name: 'Acme', $primaryAddress: address } }, 'fields.$primaryAddress');
    const a = await ok(s, '/v1/accounts', { fields: { $name: 'Acme', $primaryAddress: { street: '', country: 'de' } } });
    assert.deepEqual(a.fields.$primaryAddress.value, { street: '', country: 'DE' });
    assert.deepEqual((await ok(s, '/v1/accounts', { fields: { $name: 'Sea', $primaryAddress: { latitude: 0 } } })).fields.$primaryAddress.value, {
      latitude: 0,
    });
    await refused(s, `/v1/accounts/${a.id}`, { fields: { $primaryAddress: {} } }, 'fields.$primaryAddress');
    // null unsets it; the refusals above changed nothing.
    assert.deepEqual((await call(t, s.secret, 'GET', `/v1/accounts/${a.id}`)).json().fields.$primaryAddress.value, { street: '', country: 'DE' });
    assert.equal((await ok(s, `/v1/accounts/${a.id}`, { fields: { $primaryAddress: null } })).fields.$primaryAddress.value, null);
  });
});
