// LinkedIn profile URLs as people paste them (docs/records.md §Social handles): a handle with
// capitals is kept as written, a prefix typed in capitals (`/IN/`, `/Company/`) and every host
// spelling (`www.`, a country's subdomain, a final dot, any case) give the one stored URL, and the
// unique check and filters compare handles ignoring case.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';

eachDialect('LinkedIn profile URLs', (ctx) => {
  test('capitals in the path and every host spelling give one profile URL, the handle as written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const forms = [
      'https://www.linkedin.com/in/JohnDoe',
      'https://linkedin.com/in/JohnDoe/',
      'https://de.linkedin.com/in/JohnDoe?trk=profile',
      'HTTPS://WWW.LinkedIn.COM/in/JohnDoe',
      'https://www.linkedin.com/IN/JohnDoe',
      'https://www.linkedin.com/In/JohnDoe',
      'https://www.linkedin.com./in/JohnDoe',
      'linkedin.com./in/JohnDoe',
      'www.linkedin.com/in/JohnDoe',
      '@JohnDoe',
    ];
    for (const $linkedIn of forms) {
      const r = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $linkedIn } });
      assert.equal(r.statusCode, 200, `${$linkedIn}: ${r.body}`);
      assert.equal(r.json().fields.$linkedIn.value, 'https://linkedin.com/in/JohnDoe', $linkedIn);
    }
    const company = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $linkedIn: 'https://uk.linkedin.com/Company/AcmeCorp/' } });
    assert.equal(company.statusCode, 200, company.body);
    assert.equal(company.json().fields.$linkedIn.value, 'https://linkedin.com/company/AcmeCorp');
    // Another host or path is still refused.
    for (const $linkedIn of ['https://linkedin.com.evil.test/in/JohnDoe', 'https://www.linkedin.com/INX/JohnDoe', 'https://linkedin.com../in/JohnDoe']) {
      const r = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $linkedIn } });
      assert.deepEqual([r.statusCode, r.json().error?.code], [400, 'invalid_value'], $linkedIn);
    }
    // A filter finds them whatever the case of the handle it is given.
    const found = await call(t, s.secret, 'GET', `/v1/accounts?${encodeURIComponent('$linkedIn')}=${encodeURIComponent('https://de.linkedin.com/IN/JOHNDOE')}`);
    assert.equal(found.statusCode, 200, found.body);
    assert.equal(found.json().data.length, forms.length);
  });

  test('a page under a profile (a language, a section, a tracking query) is that profile', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const [$linkedIn, want] of [
      ['https://www.linkedin.com/in/JohnDoe/en', 'https://linkedin.com/in/JohnDoe'],
      ['https://www.linkedin.com/in/JohnDoe/de/', 'https://linkedin.com/in/JohnDoe'],
      ['https://www.linkedin.com/in/JohnDoe?trk=public_profile_browsemap', 'https://linkedin.com/in/JohnDoe'],
      ['https://www.linkedin.com/in/JohnDoe/details/experience/', 'https://linkedin.com/in/JohnDoe'],
      ['https://www.linkedin.com/IN/JohnDoe/details/experience/?trk=x', 'https://linkedin.com/in/JohnDoe'],
      ['linkedin.com./in/JohnDoe/en', 'https://linkedin.com/in/JohnDoe'],
      ['https://www.linkedin.com/company/AcmeCorp/about/', 'https://linkedin.com/company/AcmeCorp'],
    ] as const) {
      const r = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $linkedIn } });
      assert.equal(r.statusCode, 200, `${$linkedIn}: ${r.body}`);
      assert.equal(r.json().fields.$linkedIn.value, want, $linkedIn);
    }
    // A filter reads such a page as its profile too.
    const found = await call(
      t,
      s.secret,
      'GET',
      `/v1/accounts?${encodeURIComponent('$linkedIn')}=${encodeURIComponent('https://www.linkedin.com/in/johndoe/details/experience/')}`,
    );
    assert.equal(found.statusCode, 200, found.body);
    assert.equal(found.json().totalCount, 6);
    for (const $linkedIn of [
      'https://www.linkedin.com/in/',
      'https://www.linkedin.com/in//en',
      'https://www.linkedin.com/inx/JohnDoe/en',
      'https://www.linkedin.com/feed/JohnDoe',
    ]) {
      const r = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $linkedIn } });
      assert.deepEqual([r.statusCode, r.json().error?.code], [400, 'invalid_value'], $linkedIn);
    }
  });

  test('a unique LinkedIn field refuses the same profile with its handle in another case or on another host', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), {
      objectType: 'contact',
      key: 'linkedin',
      label: 'LinkedIn',
      valueType: 'SOCIAL_HANDLE',
      handleService: 'LINKEDIN',
      unique: true,
    });
    const first = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { linkedin: 'https://www.linkedin.com/in/JohnDoe' } });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().fields.linkedin.value, 'https://linkedin.com/in/JohnDoe');
    for (const linkedin of ['https://de.linkedin.com/IN/johndoe', 'linkedin.com./in/JOHNDOE', 'johndoe']) {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { linkedin } });
      assert.deepEqual([r.statusCode, r.json().error?.code, r.json().error?.param], [409, 'duplicate_value', 'fields.linkedin'], `${linkedin}: ${r.body}`);
    }
  });
});
