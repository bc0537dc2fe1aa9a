// A domain written with its final dot, the DNS root (`globex.test.`), is the domain without it
// (docs/records.md §E-mail addresses, §Value index; docs/meetings.md §Records created for
// attendees): a contact's address and an account's website written so are found by a meeting's
// participant at `globex.test`, a unique field takes the two spellings as one value, a filter finds
// the address written with the dot by the one without it and by itself, as answered, and an address
// written without it by a value ending in the dot (docs/filtering.md §Matching), and a user's
// address is unique in its workspace either way. Values are kept as written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { meetingBody } from '../helpers/meetings.ts';

eachDialect('domains written with their final dot', (ctx) => {
  test("a meeting's autoCreateRecords finds the account and the contact written with the dot, and makes neither again", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const globex = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Globex', $website: ['https://Globex.test./about'] } });
    assert.equal(globex.statusCode, 200, globex.body);
    assert.deepEqual(globex.json().fields.$website.value, ['https://Globex.test./about'], 'kept as written');
    const known = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['Known@Initech.test.'] } });
    assert.equal(known.statusCode, 200, known.body);

    const body = meetingBody({ $attendeeEmails: ['hank@globex.test', 'known@initech.test'] }, { autoCreateRecords: true });
    const m = await call(t, s.secret, 'POST', '/v1/meetings', body);
    assert.equal(m.statusCode, 200, m.body);
    const accounts = await call(t, s.secret, 'GET', '/v1/accounts');
    assert.deepEqual(
      accounts
        .json()
        .data.map((a: { fields: { $name: { value: string } } }) => a.fields.$name.value)
        .sort(),
      ['Globex'],
      'no account made for globex.test or initech.test',
    );
    const contacts = await call(t, s.secret, 'GET', '/v1/contacts');
    assert.equal(contacts.json().totalCount, 2, 'a contact for hank only');
    const hank = contacts.json().data.find((c: { fields: { $email: { value: string[] } } }) => c.fields.$email.value[0] === 'hank@globex.test');
    assert.deepEqual(hank.relationships.$account.values, [globex.json().id]);
    assert.deepEqual(m.json().relationships.$contact.values, [known.json().id, hank.id].sort());
    assert.deepEqual(m.json().relationships.$account.values, [globex.json().id]);
  });

  test('a unique EMAIL field and a filter take an address with and without the dot as one value', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'contact', key: 'work', label: 'Work', valueType: 'EMAIL', unique: true });
    const first = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { work: 'ann@acme.test.' } });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().fields.work.value, 'ann@acme.test.');
    const again = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { work: 'Ann@Acme.test' } });
    assert.deepEqual([again.statusCode, again.json().error?.code, again.json().error?.param], [409, 'duplicate_value', 'fields.work'], again.body);
    // The index holds the address without the dot, and as written beside it: both find it.
    for (const q of ['ann@acme.test', 'ANN@ACME.TEST', 'acme.test', 'ann@acme.test.', 'Ann@Acme.Test.']) {
      const found = await call(t, s.secret, 'GET', `/v1/contacts?${encodeURIComponent('work[contains]')}=${encodeURIComponent(q)}`);
      assert.equal(found.statusCode, 200, found.body);
      assert.deepEqual(
        found.json().data.map((c: { id: string }) => c.id),
        [first.json().id],
        q,
      );
    }
  });

  test('the row of an address as written is no key: an address whose key ends with a dot is no duplicate of it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'contact', key: 'work', label: 'Work', valueType: 'EMAIL', unique: true });
    // `acme.test..` (an empty last label) has the key `ann@acme.test.`, the first one's as written.
    const rooted = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { work: 'ann@acme.test.' } });
    assert.equal(rooted.statusCode, 200, rooted.body);
    const doubled = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { work: 'ann@acme.test..' } });
    assert.equal(doubled.statusCode, 200, doubled.body);
    const again = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { work: 'Ann@Acme.test..' } });
    assert.deepEqual([again.statusCode, again.json().error?.code], [409, 'duplicate_value'], again.body);
    for (const [q, ids] of [
      ['ann@acme.test.', [doubled.json().id, rooted.json().id]],
      ['acme.test..', [doubled.json().id]],
    ] as const) {
      const found = await call(t, s.secret, 'GET', `/v1/contacts?${encodeURIComponent('work[contains]')}=${encodeURIComponent(q)}`);
      assert.equal(found.statusCode, 200, found.body);
      assert.deepEqual(
        found
          .json()
          .data.map((c: { id: string }) => c.id)
          .sort(),
        [...ids].sort(),
        q,
      );
      assert.equal(found.json().totalCount, ids.length, q);
    }
  });

  test('a contains value ending in a dot finds the address as written and the one its dot makes it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const made: Record<string, string> = {};
    for (const [name, email] of [
      ['plain', 'ann@acme.test'],
      ['rooted', 'Bob@Acme.test.'],
      ['longer', 'cy@acme.test.uk'],
      ['suffix', 'dee@notacme.test'],
      ['other', 'eve@acme.testing'],
      ['idn', 'fay@xn--bcher-kva.example'],
    ] as const) {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: [email] } });
      assert.equal(r.statusCode, 200, r.body);
      made[name] = r.json().id;
    }
    // `acme.test.` is a part of `ann@acme.test.`, the plain address written with its final dot; of
    // `cy@acme.test.uk` as written; and of `dee@notacme.test.` as `acme.test` is of `dee@notacme.test`.
    for (const [q, names] of [
      ['acme.test.', ['plain', 'rooted', 'longer', 'suffix']],
      ['ann@acme.test.', ['plain']],
      ['ANN@ACME.TEST.', ['plain']],
      ['bob@acme.test.', ['rooted']],
      ['st.', ['plain', 'rooted', 'longer', 'suffix']],
      ['bücher.example.', ['idn']],
      ['xn--bcher-kva.example.', ['idn']],
      ['acme.testing.', ['other']],
      ['acme.test..', []],
    ] as const) {
      for (const [op, want] of [
        ['contains', names.map((n) => made[n]!)],
        [
          '-contains',
          Object.keys(made)
            .filter((n) => !(names as readonly string[]).includes(n))
            .map((n) => made[n]!),
        ],
      ] as const) {
        const found = await call(t, s.secret, 'GET', `/v1/contacts?${encodeURIComponent(`$email[${op}]`)}=${encodeURIComponent(q)}`);
        assert.equal(found.statusCode, 200, found.body);
        const ids = found.json().data.map((c: { id: string }) => c.id);
        assert.deepEqual([...ids].sort(), [...want].sort(), `${op} ${q}`);
        assert.equal(found.json().totalCount, want.length, `${op} ${q}`);
      }
    }
  });

  test('a contains value ending in a space finds no address by the space its row written with the dot ends with', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids: string[] = [];
    for (const email of ['bob@acme.test.', 'ann@acme.test']) {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: [email] } });
      assert.equal(r.statusCode, 200, r.body);
      ids.push(r.json().id);
    }
    // No address holds white space: each value finds none, and its negation keeps both.
    for (const q of [' ', 'test. ', 'bob@acme.test. ', '.  ']) {
      for (const [op, want] of [
        ['contains', []],
        ['-contains', ids],
      ] as const) {
        const found = await call(t, s.secret, 'GET', `/v1/contacts?${encodeURIComponent(`$email[${op}]`)}=${encodeURIComponent(q)}`);
        assert.equal(found.statusCode, 200, found.body);
        assert.deepEqual(
          found
            .json()
            .data.map((c: { id: string }) => c.id)
            .sort(),
          [...want].sort(),
          `${op} ${JSON.stringify(q)}`,
        );
      }
    }
    // Without the space, the address is found as written.
    const dotted = await call(t, s.secret, 'GET', `/v1/contacts?${encodeURIComponent('$email[contains]')}=${encodeURIComponent('bob@acme.test.')}`);
    assert.deepEqual(
      dotted.json().data.map((c: { id: string }) => c.id),
      [ids[0]],
    );
  });

  test("a user's address with the dot is the address without it: a second user of it is refused", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const made = await rolodex(t, ['user', 'create', '--workspace', s.workspaceId, '--email', 'eve@acme.test']);
    assert.equal(made.code, 0, made.err);
    const twice = await rolodex(t, ['user', 'create', '--workspace', s.workspaceId, '--email', 'eve@acme.test.']);
    assert.equal(twice.code, 1, twice.out);
    assert.match(twice.err, /already exists/);
  });
});
