// The record API (docs/records.md) on both databases: create, retrieve, update and list of
// accounts, contacts and opportunities, every answer validated against our own OpenAPI document.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { addField, addRelationship } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { newestFirst } from '../helpers/order.ts';
import { loadDocument, type Operation, operationFor, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';

eachDialect('records API', (ctx) => {
  let ops: Operation[];
  const checker = responseChecker();
  before(async () => {
    ops = operationsOf(await loadDocument(ctx()));
  });

  async function api(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown, extra: Record<string, string> = {}) {
    const res = await call(ctx(), s.secret, method, url, body, extra);
    const why = checker.check(operationFor(ops, method, url), res);
    assert.equal(why, null, `${method} ${url}: ${why}`);
    return res;
  }
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await api(s, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, url: string, body: unknown, code: string, param?: string) {
    const res = await api(s, 'POST', url, body);
    assert.equal(res.json().error?.code, code, `${url} ${JSON.stringify(body)}: ${res.body}`);
    if (param !== undefined) assert.equal(res.json().error.param, param, `${url} ${JSON.stringify(body)}`);
  }

  test('create and retrieve: every defined field and relationship present, select by label returns the id', async () => {
    const s = await seedWorkspace(ctx());
    const defs = await ok(s, 'GET', '/v1/accounts/definitions');
    assert.equal(defs.objectType, 'account');
    const software = defs.fieldDefinitions.$industry.typeConfiguration.options.find((o: any) => o.label === 'Software');
    assert.match(software.id, /^opt_/);
    assert.deepEqual(defs.fieldDefinitions.$website.typeConfiguration, { multipleValues: true });
    assert.deepEqual(defs.fieldDefinitions.$linkedIn.typeConfiguration, { handleService: 'LINKEDIN' });
    assert.equal(defs.fieldDefinitions.$accountStatus.readOnly, true);
    assert.equal(defs.relationshipDefinitions.$owner.cardinality, 'HAS_ONE');

    const acc = await ok(s, 'POST', '/v1/accounts', {
      fields: { $name: 'Acme', $industry: ['Software'], $website: ['https://acme.test'], $primaryAddress: { city: 'Berlin', country: 'de' } },
      relationships: { $owner: s.userId },
    });
    assert.match(acc.id, /^acc_/);
    assert.equal(acc.createdAt, acc.updatedAt);
    assert.deepEqual(acc.fields.$industry, { value: [software.id], valueType: 'MULTI_SELECT' });
    assert.deepEqual(acc.fields.$primaryAddress.value, { city: 'Berlin', country: 'DE' });
    assert.deepEqual(acc.fields.$headcount, { value: null, valueType: 'SINGLE_SELECT' });
    assert.deepEqual(acc.fields.$accountStatus, { value: null, valueType: 'TEXT' });
    assert.deepEqual(acc.relationships.$owner, { cardinality: 'has_one', objectType: 'member', values: [s.userId] });
    assert.deepEqual(acc.relationships.$opportunity, { cardinality: 'has_many', objectType: 'opportunity', values: [] });
    assert.deepEqual(Object.keys(acc.fields), Object.keys(defs.fieldDefinitions));
    assert.deepEqual(Object.keys(acc.relationships), Object.keys(defs.relationshipDefinitions));
    assert.deepEqual(await ok(s, 'GET', `/v1/accounts/${acc.id}`), acc);

    // By id as well as by label.
    const again = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Beta', $industry: [software.id], $headcount: '11-50' } });
    assert.deepEqual(again.fields.$industry.value, [software.id]);
    assert.match(again.fields.$headcount.value, /^opt_/);
  });

  test('contacts: $name is a FULL_NAME, $email multi-valued; opportunities require $name, $stage and $account', async () => {
    const s = await seedWorkspace(ctx());
    const con = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann', lastName: 'Lee' }, $email: ['ann@x.test', 'a@y.test'] } });
    assert.deepEqual(con.fields.$name, { value: { firstName: 'Ann', lastName: 'Lee' }, valueType: 'FULL_NAME' });
    assert.deepEqual(con.fields.$email.value, ['ann@x.test', 'a@y.test']);
    // One string is a list of one; its content is checked as an element's.
    assert.deepEqual((await ok(s, 'POST', '/v1/contacts', { fields: { $email: 'ann@x.test' } })).fields.$email.value, ['ann@x.test']);
    await refused(s, '/v1/contacts', { fields: { $email: 'ann' } }, 'invalid_value', 'fields.$email');
    await refused(s, '/v1/contacts', { fields: { $email: 5 } }, 'invalid_type', 'fields.$email');
    await refused(s, '/v1/contacts', { fields: { $email: ['a@x.test', 'a@x.test'] } }, 'invalid_value', 'fields.$email[1]');
    await refused(s, '/v1/contacts', { fields: { $name: 'Ann' } }, 'invalid_type', 'fields.$name');
    await refused(s, '/v1/contacts', { fields: { $name: { middle: 'x' } } }, 'unknown_field', 'fields.$name.middle');
    assert.equal((await ok(s, 'POST', '/v1/contacts', { fields: {} })).fields.$name.value, null);

    await refused(s, '/v1/accounts', { fields: {} }, 'parameter_missing', 'fields.$name');
    await refused(s, '/v1/accounts', { fields: { $name: 5 } }, 'invalid_type', 'fields.$name');
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    await refused(s, '/v1/opportunities', { fields: { $name: 'Deal' }, relationships: { $account: acc.id } }, 'parameter_missing', 'fields.$stage');
    await refused(s, '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: {} }, 'parameter_missing', 'relationships.$account');
    // The message names the type with its article.
    assert.equal((await api(s, 'POST', '/v1/accounts', { fields: {} })).json().error.message, '"$name" is required to create an account.');
    const noAccount = await api(s, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: {} });
    assert.equal(noAccount.json().error.message, '"$account" is required to create an opportunity.');
    await refused(s, '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Nope' }, relationships: { $account: acc.id } }, 'invalid_value', 'fields.$stage');
    await refused(s, '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: [acc.id, acc.id + 'x'] } }, 'invalid_value');
    const opp = await ok(s, 'POST', '/v1/opportunities', {
      fields: { $name: 'Deal', $stage: 'Lead' },
      relationships: { $account: [acc.id], $champion: con.id },
    });
    assert.deepEqual(opp.relationships.$account.values, [acc.id]);
    assert.deepEqual(opp.relationships.$createdBy.values, [s.userId], 'a user key is the default $createdBy');
    assert.match(opp.fields.$stage.value, /^opt_/);
    const shown = await ok(s, 'GET', `/v1/accounts/${acc.id}`);
    assert.deepEqual(shown.relationships.$opportunity.values, [opp.id], 'the inverse shows the opportunity');
    assert.equal(shown.updatedAt, acc.updatedAt, 'a read-only inverse never moves updatedAt');
  });

  test('keys before values, read-only fields and relationships, unknown keys', async () => {
    const s = await seedWorkspace(ctx());
    await refused(s, '/v1/accounts', { fields: { $name: 'A', nope: 1 } }, 'unknown_field', 'fields.nope');
    await refused(s, '/v1/accounts', { fields: { $name: 5, $accountStatus: 'x' } }, 'read_only_field', 'fields.$accountStatus');
    await refused(s, '/v1/accounts', { fields: { $name: 'A' }, relationships: { $opportunity: [] } }, 'read_only_relationship', 'relationships.$opportunity');
    await refused(s, '/v1/accounts', { fields: { $name: 'A' }, relationships: { $nope: [] } }, 'unknown_relationship', 'relationships.$nope');
    await refused(s, '/v1/accounts', { fields: { $name: 'A' }, other: {} }, 'unknown_field', 'other');
    // A required key absent is named after every key that is there was checked (docs/records.md §Order of checks).
    await refused(s, '/v1/accounts', { fields: {}, relationships: { $nope: [] } }, 'unknown_relationship', 'relationships.$nope');
    await refused(s, '/v1/accounts', { fields: {}, relationships: { $opportunity: [] } }, 'read_only_relationship', 'relationships.$opportunity');
    await refused(s, '/v1/opportunities', { fields: { $name: 'D' }, relationships: { $task: [] } }, 'read_only_relationship', 'relationships.$task');
    await refused(s, '/v1/opportunities', { fields: { $stage: 'Lead' }, relationships: {} }, 'parameter_missing', 'fields.$name');
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A' } });
    const opp = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'D', $stage: 'Lead' }, relationships: { $account: acc.id } });
    await refused(
      s,
      `/v1/opportunities/${opp.id}`,
      { relationships: { $createdBy: { replace: s.userId } } },
      'read_only_relationship',
      'relationships.$createdBy',
    );
  });

  test('every valueType accepted and refused through custom fields; unique values', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    const cases: [string, Parameters<typeof addField>[1]['valueType'], unknown, unknown, string][] = [
      ['t', 'TEXT', 'hello', 5, 'invalid_type'],
      ['md', 'MARKDOWN', '# hi', true, 'invalid_type'],
      ['n', 'NUMBER', 2.5, '2.5', 'invalid_type'],
      ['c', 'CURRENCY', 100, '100', 'invalid_type'],
      ['cb', 'CHECKBOX', true, 'true', 'invalid_type'],
      ['dt', 'DATETIME', '2026-03-01T10:00:00+01:00', '2026-03-01', 'invalid_value'],
      ['em', 'EMAIL', 'a@b.test', 'not-an-email', 'invalid_value'],
      ['u', 'URL', 'https://x.test', 'ftp://x.test', 'invalid_value'],
      ['tel', 'TELEPHONE', '+49 30 1234567', 'abc', 'invalid_value'],
      ['sh', 'SOCIAL_HANDLE', 'acme', 'a b', 'invalid_value'],
      ['adr', 'ADDRESS', { street: 'Main 1', country: 'US' }, { country: 'XX' }, 'invalid_value'],
      ['fn', 'FULL_NAME', { firstName: 'A' }, { firstName: 1 }, 'invalid_type'],
    ];
    for (const [key, valueType] of cases) await addField(op, { objectType: 'account', key, label: key, valueType });
    await addField(op, { objectType: 'account', key: 'code', label: 'Code', valueType: 'TEXT', unique: true });
    for (const [key, , good, bad, code] of cases) {
      const made = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', [key]: good } });
      assert.notEqual(made.fields[key].value, null, key);
      await refused(s, '/v1/accounts', { fields: { $name: 'A', [key]: bad } }, code, undefined);
    }
    const dt = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', dt: '2026-03-01T10:00:00+01:00' } });
    assert.equal(dt.fields.dt.value, '2026-03-01T09:00:00.000Z');
    const first = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', code: 'X-1' } });
    const res = await api(s, 'POST', '/v1/accounts', { fields: { $name: 'B', code: 'x-1' } });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().error.code, 'duplicate_value');
    assert.equal(res.json().error.param, 'fields.code');
    // The record itself may keep its value.
    await ok(s, 'POST', `/v1/accounts/${first.id}`, { fields: { code: 'X-1' } });
  });

  test('a unique DATETIME refuses the same instant, however it is written', async () => {
    const s = await seedWorkspace(ctx());
    await addField(operatorCtx(ctx().deps.db.kysely, s.workspaceId), {
      objectType: 'account',
      key: 'signed',
      label: 'Signed',
      valueType: 'DATETIME',
      unique: true,
    });
    const first = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', signed: '2026-03-01T10:00:00+01:00' } });
    for (const same of ['2026-03-01T09:00:00Z', '2026-03-01T09:00:00.000Z']) {
      const res = await api(s, 'POST', '/v1/accounts', { fields: { $name: 'B', signed: same } });
      assert.deepEqual([res.statusCode, res.json().error?.code, res.json().error?.param], [409, 'duplicate_value', 'fields.signed'], same);
    }
    await ok(s, 'POST', `/v1/accounts/${first.id}`, { fields: { signed: '2026-03-01T09:00:00Z' } });
    await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'C', signed: '2026-03-01T09:00:00.001Z' } });
  });

  test('update: null clears, nothing changed leaves updatedAt, relationships add/remove/replace', async () => {
    const s = await seedWorkspace(ctx());
    const t: TestApp = ctx();
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', $twitter: 'acme' } });
    const other = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'B' } });
    const same = await ok(s, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: 'A' } });
    assert.equal(same.updatedAt, acc.updatedAt);
    await new Promise((r) => setTimeout(r, 5));
    const cleared = await ok(s, 'POST', `/v1/accounts/${acc.id}`, { fields: { $twitter: null } });
    assert.equal(cleared.fields.$twitter.value, null);
    assert.notEqual(cleared.updatedAt, acc.updatedAt);
    await refused(s, `/v1/accounts/${acc.id}`, { fields: { $name: null } }, 'invalid_value', 'fields.$name');

    const con = await ok(s, 'POST', '/v1/contacts', { fields: {}, relationships: { $account: acc.id } });
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).relationships.$contact.values, [con.id]);
    // The other end: account $contact writes the contact's $account, and both move updatedAt.
    await new Promise((r) => setTimeout(r, 5));
    const linked = await ok(s, 'POST', `/v1/accounts/${other.id}`, { relationships: { $contact: { add: con.id } } });
    assert.deepEqual(linked.relationships.$contact.values, [con.id]);
    const conNow = await ok(s, 'GET', `/v1/contacts/${con.id}`);
    assert.deepEqual(conNow.relationships.$account.values, [acc.id, other.id]);
    assert.notEqual(conNow.updatedAt, con.updatedAt);
    await ok(s, 'POST', `/v1/contacts/${con.id}`, { relationships: { $account: { remove: acc.id } } });
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).relationships.$contact.values, []);
    await ok(s, 'POST', `/v1/accounts/${other.id}`, { relationships: { $contact: { replace: null } } });
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${con.id}`)).relationships.$account.values, []);
    // A create that links the other end answers it as a retrieve does (the contacts by creation).
    const con2 = await ok(s, 'POST', '/v1/contacts', { fields: {} });
    const third = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'C' }, relationships: { $contact: [con2.id, con.id] } });
    assert.deepEqual(third.relationships.$contact.values, [con.id, con2.id]);
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${third.id}`)).relationships.$contact.values, [con.id, con2.id]);

    const opp = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'D', $stage: 'Lead' }, relationships: { $account: acc.id } });
    const url = `/v1/opportunities/${opp.id}`;
    await refused(s, url, { relationships: { $account: { add: other.id } } }, 'invalid_value', 'relationships.$account.add');
    await refused(s, url, { relationships: { $account: { replace: null } } }, 'invalid_value', 'relationships.$account.replace');
    await refused(s, url, { relationships: { $account: { remove: acc.id } } }, 'invalid_value');
    await refused(s, url, { relationships: { $account: {} } }, 'parameter_missing', 'relationships.$account');
    await refused(s, url, { relationships: { $account: { replace: other.id, add: acc.id } } }, 'invalid_value');
    await refused(s, url, { relationships: { $champion: { add: 'x', remove: 'x' } } }, 'conflicting_membership_change', 'relationships.$champion.remove');
    await refused(s, url, { relationships: { $champion: { add: [con.id, 'con_missing'] } } }, 'invalid_value');
    await refused(s, url, { relationships: { $owner: { add: ['usr_nope'] } } }, 'relationship_entity_missing', 'relationships.$owner.add[0]');
    const moved = await ok(s, 'POST', url, { relationships: { $account: { replace: other.id }, $champion: { add: con.id } } });
    assert.deepEqual(moved.relationships.$account.values, [other.id]);
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).relationships.$opportunity.values, []);
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${other.id}`)).relationships.$opportunity.values, [opp.id]);
    const removed = await ok(s, 'POST', url, { relationships: { $champion: { remove: con.id } } });
    assert.deepEqual(removed.relationships.$champion.values, []);
    void t;
  });

  test('ids of another workspace are relationship_entity_missing, and records of another workspace are not found', async () => {
    const a = await seedWorkspace(ctx());
    const b = await seedWorkspace(ctx());
    const theirs = await ok(b, 'POST', '/v1/accounts', { fields: { $name: 'Theirs' } });
    await refused(a, '/v1/contacts', { fields: {}, relationships: { $account: ['x', theirs.id] } }, 'relationship_entity_missing', 'relationships.$account[0]');
    await refused(a, '/v1/contacts', { fields: {}, relationships: { $account: [theirs.id] } }, 'relationship_entity_missing', 'relationships.$account[0]');
    await refused(a, '/v1/accounts', { fields: { $name: 'A' }, relationships: { $owner: b.userId } }, 'relationship_entity_missing', 'relationships.$owner');
    assert.equal((await api(a, 'GET', `/v1/accounts/${theirs.id}`)).statusCode, 404);
    assert.equal((await api(a, 'POST', `/v1/accounts/${theirs.id}`, { fields: {} })).statusCode, 404);
    assert.equal((await ok(a, 'GET', '/v1/accounts')).totalCount, 0);
  });

  test('custom relationships are own rows; listing is newest first and agrees with a full scan', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await addRelationship(op, { objectType: 'contact', key: 'referrer', label: 'Referrer', cardinality: 'has_one', targetType: 'contact' });
    const made: { id: string; createdAt: string }[] = [];
    for (let i = 0; i < 30; i++) made.push(await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: `C${i}` } } }));
    const ref = await ok(s, 'POST', '/v1/contacts', { fields: {}, relationships: { referrer: made[0]?.id } });
    made.push(ref);
    assert.deepEqual(ref.relationships.referrer, { cardinality: 'has_one', objectType: 'contact', values: [made[0]?.id] });
    // Newest first by createdAt; records created in the same millisecond by id, descending.
    const expected = made.sort(newestFirst).map((r) => r.id);
    for (const offset of [0, 7, 25, 30, 31, 40]) {
      const page = await ok(s, 'GET', `/v1/contacts?limit=10&offset=${offset}`);
      assert.equal(page.totalCount, 31);
      assert.deepEqual(
        page.data.map((r: any) => r.id),
        expected.slice(offset, offset + 10),
        `offset ${offset}`,
      );
    }
  });

  test('idempotent creates: one record for one key; a failed create retried with its key runs again', async () => {
    const s = await seedWorkspace(ctx());
    const key = { 'idempotency-key': 'create-1' };
    const all = await Promise.all(Array.from({ length: 50 }, () => call(ctx(), s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Once' } }, key)));
    const done = all.filter((r) => r.statusCode === 200);
    assert.ok(done.length >= 1);
    for (const r of all) assert.ok(r.statusCode === 200 || r.json().error.code === 'idempotency_conflict', r.body);
    assert.equal(new Set(done.map((r) => r.json().id)).size, 1);
    assert.equal((await ok(s, 'GET', '/v1/accounts')).totalCount, 1);

    const key2 = { 'idempotency-key': 'create-2' };
    const failed = await call(ctx(), s.secret, 'POST', '/v1/contacts', { fields: {}, relationships: { $account: 'acc_missing' } }, key2);
    assert.equal(failed.json().error.code, 'relationship_entity_missing');
    const acc = done[0]!.json();
    const retried = await call(ctx(), s.secret, 'POST', '/v1/contacts', { fields: {}, relationships: { $account: acc.id } }, key2);
    assert.equal(retried.statusCode, 200, retried.body);
  });
});
