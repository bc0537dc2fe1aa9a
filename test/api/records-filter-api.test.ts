// Filtered record listings through HTTP (docs/filtering.md) on both databases: the filters reach
// the listing routes, records written through the API are found by every kind of filter
// (contains included, so every writer keeps the trigrams), totalCount is exact, and a bad filter
// or an unknown parameter is invalid_parameter naming its key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { newestFirst } from '../helpers/order.ts';

eachDialect('records filtered through HTTP', (ctx) => {
  async function post(s: Seeded, url: string, body: unknown) {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ id: string; createdAt: string }>();
  }
  async function list(s: Seeded, qs: string) {
    const res = await call(ctx(), s.secret, 'GET', `/v1/contacts?${qs}`);
    return { status: res.statusCode, body: res.json() };
  }

  test('equality, prefix, contains, range, relationship and negation filters answer exactly the matches', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'contact', key: 'seats', label: 'Seats', valueType: 'NUMBER' });
    const acme = await post(s, '/v1/accounts', { fields: { $name: 'Acme' } });
    const made: { id: string; createdAt: string; first: string; email: string; seats: number }[] = [];
    for (const [i, first] of ['Ann', 'Anna', 'Bob', 'Ünal', 'Zoë'].entries()) {
      const email = `${first.toLowerCase()}@${i % 2 === 0 ? 'acme' : 'other'}.test`;
      const body = {
        fields: { $name: { firstName: first, lastName: 'Smith' }, $email: [email], seats: i * 10 },
        relationships: i < 2 ? { $account: acme.id } : {},
      };
      made.push({ ...(await post(s, '/v1/contacts', body)), first, email, seats: i * 10 });
    }
    // An update moves the contact out of one filter and into another: the indexes follow it.
    await post(s, `/v1/contacts/${made[2]!.id}`, { fields: { $email: ['bob@acme-corp.test'] } });
    made[2]!.email = 'bob@acme-corp.test';

    const ids = async (qs: string) => {
      const r = await list(s, qs);
      assert.equal(r.status, 200, `${qs}: ${JSON.stringify(r.body)}`);
      return { ids: (r.body.data as { id: string }[]).map((d) => d.id).sort(), total: r.body.totalCount as number };
    };
    const expect = (pred: (m: (typeof made)[number], i: number) => boolean) =>
      made
        .filter(pred)
        .map((m) => m.id)
        .sort();
    const cases: [string, string[]][] = [
      [`$name=${encodeURIComponent('ANN smith')}`, expect((m) => m.first === 'Ann')],
      [`${encodeURIComponent('$name[startsWith]')}=an`, expect((m) => m.first.startsWith('Ann'))],
      [`${encodeURIComponent('$name[startsWith]')}=${encodeURIComponent('ünal')}`, expect((m) => m.first === 'Ünal')],
      [`$email=acme`, expect((m) => m.email.includes('acme'))],
      [`${encodeURIComponent('$email[-contains]')}=acme`, expect((m) => !m.email.includes('acme'))],
      [`${encodeURIComponent('seats[greaterThan]')}=10&${encodeURIComponent('seats[lessThan]')}=40`, expect((m) => m.seats > 10 && m.seats < 40)],
      [`${encodeURIComponent('seats[-lessThan]')}=20`, expect((m) => m.seats >= 20)],
      [`$account=${acme.id}`, expect((_m, i) => i < 2)],
      [`${encodeURIComponent('$account[-equal]')}=${acme.id}&$email=acme`, expect((m, i) => i >= 2 && m.email.includes('acme'))],
    ];
    for (const [qs, want] of cases) {
      const got = await ids(qs);
      assert.deepEqual(got.ids, want, qs);
      assert.equal(got.total, want.length, `${qs}: totalCount`);
    }
    const paged = await list(s, `$email=test&limit=2&offset=1`);
    assert.equal(paged.body.totalCount, 5);
    assert.deepEqual(
      (paged.body.data as { id: string }[]).map((d) => d.id),
      // Newest first by createdAt; contacts created in the same millisecond by id, descending.
      [...made]
        .sort(newestFirst)
        .slice(1, 3)
        .map((m) => m.id),
    );
  });

  test('a TEXT value longer than the value index keeps is stored whole and filtered exactly (docs/records.md §Value index)', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    // Random base64 does not compress: PostgreSQL refused its B-tree entry (a 500) before the bound.
    const long = randomBytes(7000).toString('base64').slice(0, 9000);
    const account = await post(s, '/v1/accounts', { fields: { $name: long } });
    const got = await call(t, s.secret, 'GET', `/v1/accounts/${account.id}`);
    assert.equal(got.json<{ fields: { $name: { value: string } } }>().fields.$name.value, long);
    const accounts = async (qs: string) => {
      const res = await call(t, s.secret, 'GET', `/v1/accounts?${qs}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ data: { id: string }[]; totalCount: number }>();
    };
    const prefix = long.slice(0, 900);
    assert.deepEqual(
      (await accounts(`$name[startsWith]=${encodeURIComponent(prefix)}`)).data.map((r) => r.id),
      [account.id],
    );
    // The value is longer than any filter value: no equality can match it, even on its indexed prefix.
    assert.equal((await accounts(`$name=${encodeURIComponent(prefix)}`)).totalCount, 0);
    // 800 characters of 3 bytes each: within the character limit, over the byte bound.
    const wide = await call(t, s.secret, 'GET', `/v1/accounts?$name[startsWith]=${encodeURIComponent('\u30fc'.repeat(800))}`);
    assert.equal(wide.statusCode, 400, wide.body);
    assert.equal(wide.json<{ error: { code: string; param: string } }>().error.param, '$name[startsWith]');
  });

  test('Greek capitals match ignoring case wherever a Σ falls: a prefix ending in Σ finds the longer name', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const aster = await post(s, '/v1/accounts', { fields: { $name: 'ΑΣΤΕΡΙΑ' } });
    const odos = await post(s, '/v1/accounts', { fields: { $name: 'Οδός' } });
    const kostas = await post(s, '/v1/contacts', { fields: { $name: { firstName: 'Κώστας', lastName: 'Νίκος' }, $email: ['ΚΩΣΤΑΣ@acme.test'] } });
    const ids = async (url: string) => {
      const res = await call(t, s.secret, 'GET', url);
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ data: { id: string }[] }>().data.map((r) => r.id);
    };
    const q = (key: string, v: string) => `${encodeURIComponent(key)}=${encodeURIComponent(v)}`;
    for (const prefix of ['ΑΣ', 'ας', 'ασ', 'ΑΣΤ']) assert.deepEqual(await ids(`/v1/accounts?${q('$name[startsWith]', prefix)}`), [aster.id], prefix);
    for (const name of ['ΟΔΌΣ', 'οδόσ', 'οδός']) assert.deepEqual(await ids(`/v1/accounts?${q('$name', name)}`), [odos.id], name);
    assert.deepEqual(await ids(`/v1/contacts?${q('$name[startsWith]', 'ΚΏΣ')}`), [kostas.id]);
    assert.deepEqual(await ids(`/v1/contacts?${q('$name', 'ΚΏΣΤΑΣ ΝΊΚΟΣ')}`), [kostas.id]);
    for (const needle of ['ΚΩΣ', 'κως', 'ας@']) assert.deepEqual(await ids(`/v1/contacts?${q('$email', needle)}`), [kostas.id], needle);
  });

  test('an inverse relationship filter holds only ids of its own type, though other types name their links alike', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const acme = await post(s, '/v1/accounts', { fields: { $name: 'Acme' } });
    const other = await post(s, '/v1/accounts', { fields: { $name: 'Other' } });
    // A contact, an opportunity, a task and a note all link to Acme by a relationship named $account.
    const contact = await post(s, '/v1/contacts', { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: acme.id } });
    const opp = await post(s, '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acme.id } });
    const task = await post(s, '/v1/tasks', {
      fields: { $title: 'Call', $status: 'TODO' },
      relationships: { $assignedTo: s.userId, $account: acme.id },
    });
    const note = await post(s, '/v1/notes', { fields: { $title: 'Met' }, relationships: { $account: acme.id } });
    const accounts = async (qs: string) => {
      const res = await call(t, s.secret, 'GET', `/v1/accounts?${qs}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<{ data: { id: string }[]; totalCount: number }>();
      assert.equal(body.totalCount, body.data.length, qs);
      return body.data.map((r) => r.id).sort();
    };
    const ids = { $contact: contact.id, $opportunity: opp.id, $task: task.id, $note: note.id };
    for (const [key, own] of Object.entries(ids)) {
      assert.deepEqual(await accounts(`${key}=${own}`), [acme.id], key);
      for (const [otherKey, id] of Object.entries(ids)) {
        if (otherKey === key) continue;
        // An id of another type names no record this relationship holds.
        assert.deepEqual(await accounts(`${key}=${id}`), [], `${key}=${otherKey}'s id`);
        assert.deepEqual(await accounts(`${encodeURIComponent(`${key}[-equal]`)}=${id}`), [acme.id, other.id].sort(), `${key}[-equal]=${otherKey}'s id`);
        const both = `${encodeURIComponent(`${key}[-contains]`)}=${id}&${encodeURIComponent('$name[startsWith]')}=ac`;
        assert.deepEqual(await accounts(both), [acme.id], both);
      }
    }
  });

  test('a bad filter or an unknown parameter is invalid_parameter naming its key', async () => {
    const s = await seedWorkspace(ctx());
    for (const [qs, param] of [
      [`${encodeURIComponent('$email[equal]')}=x`, '$email[equal]'],
      [`${encodeURIComponent('$nope[equal]')}=x`, '$nope[equal]'],
      [`unknown=1`, 'unknown'],
      [`${encodeURIComponent('__proto__[equal]')}=x`, '__proto__[equal]'],
      [`$name=`, '$name'],
    ] as const) {
      const r = await list(s, qs);
      assert.equal(r.status, 400, qs);
      assert.equal(r.body.error.code, 'invalid_parameter', qs);
      assert.equal(r.body.error.param, param, qs);
    }
  });
});
