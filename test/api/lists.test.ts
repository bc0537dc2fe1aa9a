// The list endpoints of the contract (docs/design.md §Lists): shapes, create and update rules,
// every error code with its param, the two-scope rule and workspace isolation, on both databases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { createHttpLinks } from '../../src/lib/links.ts';
import { call, eachDialect, keyFor, seedWorkspace } from '../helpers/app.ts';
import { assertError, seedRecords, sleep } from '../helpers/lists-fixtures.ts';

const ID = /^lst_[0-9a-z]{26}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

eachDialect('lists', (ctx) => {
  test('create returns the list resource exactly; get and list return the same', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const res = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: '  Hot leads ', $objectType: 'contact' } });
    assert.equal(res.statusCode, 200);
    const list = res.json();
    assert.deepEqual(Object.keys(list).sort(), ['createdAt', 'fields', 'httpLink', 'id']);
    assert.match(list.id, ID);
    assert.match(list.createdAt, ISO);
    assert.deepEqual(list.fields, { $name: { value: 'Hot leads', valueType: 'TEXT' }, $objectType: { value: 'contact', valueType: 'TEXT' } });
    assert.equal(list.httpLink, null);
    assert.deepEqual((await call(t, s.secret, 'GET', `/v1/lists/${list.id}`)).json(), list);
    assert.deepEqual((await call(t, s.secret, 'GET', '/v1/lists')).json(), { data: [list], object: 'list', totalCount: 1 });
  });

  test('httpLink uses PUBLIC_APP_URL when configured', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { toResource } = await import('../../src/lists/service.ts');
    const row = {
      id: 'lst_x',
      workspace_id: s.workspaceId,
      external_id: null,
      name: 'n',
      object_type: 'account' as const,
      member_count: 0,
      created_at: 'c',
      updated_at: 'c',
    };
    const c = operatorCtx(t.deps.db.kysely, s.workspaceId, { links: createHttpLinks('https://app.example') });
    assert.equal(toResource(c, row).httpLink, 'https://app.example/lists/lst_x');
  });

  test('$objectType accepts the three types and their $ aliases; responses use the bare value', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const [given, bare] of [
      ['account', 'account'],
      ['$account', 'account'],
      ['$contact', 'contact'],
      ['opportunity', 'opportunity'],
      ['$opportunity', 'opportunity'],
    ]) {
      const res = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'x', $objectType: given } });
      assert.equal(res.json().fields.$objectType.value, bare);
    }
  });

  test('create validation: each error has its code and param', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const post = (body: unknown) => call(t, s.secret, 'POST', '/v1/lists', body);
    assertError(await post({ fields: { $objectType: 'contact' } }), 400, 'parameter_missing', 'fields.$name');
    assertError(await post({ fields: { $name: 'x' } }), 400, 'parameter_missing', 'fields.$objectType');
    assertError(await post({}), 400, 'parameter_missing', 'fields');
    assertError(await post({ fields: { $name: 'x', $objectType: 'lead' } }), 400, 'invalid_value', 'fields.$objectType');
    assertError(await post({ fields: { $name: '   ', $objectType: 'contact' } }), 400, 'invalid_value', 'fields.$name');
    assertError(await post({ fields: { $name: 'x'.repeat(256), $objectType: 'contact' } }), 400, 'invalid_value', 'fields.$name');
    assert.equal((await post({ fields: { $name: 'x'.repeat(255), $objectType: 'contact' } })).statusCode, 200);
    assertError(await post({ fields: { $name: 7, $objectType: 'contact' } }), 400, 'invalid_type', 'fields.$name');
    assertError(await post({ fields: { $name: 'x', $objectType: 'contact', color: 'red' } }), 400, 'unknown_field', 'fields.color');
    assertError(await post({ fields: { $name: 'x', $objectType: 'contact' }, extra: 1 }), 400, 'unknown_field', 'extra');
    assertError(
      await post({ fields: { $name: 'x', $objectType: 'contact' }, relationships: { $contacts: ['a', 5] } }),
      400,
      'invalid_type',
      'relationships.$contacts[1]',
    );
    // An id has 1 to 255 characters, as a record's relationship ids (docs/records.md §Writing
    // relationships): an empty one is invalid_value at its place, never an id looked for.
    const ids = (v: unknown) => post({ fields: { $name: 'x', $objectType: 'contact' }, relationships: { $contacts: v } });
    assertError(await ids(''), 400, 'invalid_value', 'relationships.$contacts');
    assertError(await ids(['con_x', '']), 400, 'invalid_value', 'relationships.$contacts[1]');
    assertError(await ids('c'.repeat(256)), 400, 'invalid_value', 'relationships.$contacts');
    const tooMany = Array.from({ length: 1001 }, (_, i) => `con_${i}`);
    assertError(
      await post({ fields: { $name: 'x', $objectType: 'contact' }, relationships: { $contacts: tooMany } }),
      400,
      'invalid_value',
      'relationships.$contacts',
    );
    // Only the successful 255-character create above was written.
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 1);
  });

  test('create with initial members: a string or an array; duplicates collapse', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [a, b] = await seedRecords(t, s.workspaceId, 'contact', 2);
    const one = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'one', $objectType: 'contact' }, relationships: { $contacts: a } })).json();
    const page1 = (await call(t, s.secret, 'GET', `/v1/lists/${one.id}/contacts`)).json();
    assert.deepEqual(
      page1.data.map((e: { id: string }) => e.id),
      [a],
    );
    assert.equal(page1.totalCount, 1);
    const two = (
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'two', $objectType: 'contact' }, relationships: { $contacts: [a, b, a] } })
    ).json();
    assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${two.id}/contacts`)).json().totalCount, 2);
  });

  test('a relationship key that does not match $objectType is unknown_relationship; nothing created', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [acc] = await seedRecords(t, s.workspaceId, 'account', 1);
    assertError(
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'x', $objectType: 'contact' }, relationships: { $accounts: [acc] } }),
      400,
      'unknown_relationship',
      'relationships.$accounts',
    );
    assertError(
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'x', $objectType: 'contact' }, relationships: { $leads: [] } }),
      400,
      'unknown_relationship',
      'relationships.$leads',
    );
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'x', $objectType: 'account' } })).json();
    assertError(
      await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { relationships: { $contacts: { add: [acc] } } }),
      400,
      'unknown_relationship',
      'relationships.$contacts',
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 1);
  });

  test('missing, foreign and other-kind entity ids are relationship_entity_missing naming the id; nothing applied', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const other = await seedWorkspace(t);
    const [c1, c2] = await seedRecords(t, s.workspaceId, 'contact', 2);
    const [foreign] = await seedRecords(t, other.workspaceId, 'contact', 1);
    const [acc] = await seedRecords(t, s.workspaceId, 'account', 1);
    const create = (rel: unknown) =>
      call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'x', $objectType: 'contact' }, relationships: { $contacts: rel } });
    let e = assertError(await create([c1, 'con_nope']), 400, 'relationship_entity_missing', 'relationships.$contacts[1]');
    assert.match(e.message, /con_nope/);
    assertError(await create(foreign), 400, 'relationship_entity_missing', 'relationships.$contacts');
    assertError(await create([c1, c2, acc]), 400, 'relationship_entity_missing', 'relationships.$contacts[2]');
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 0);

    const list = (await create([c1])).json();
    e = assertError(
      await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { fields: { $name: 'renamed' }, relationships: { $contacts: { add: [c2, foreign] } } }),
      400,
      'relationship_entity_missing',
      'relationships.$contacts.add[1]',
    );
    assert.match(e.message, new RegExp(foreign as string));
    assertError(
      await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { relationships: { $contacts: { remove: 'con_nope' } } }),
      400,
      'relationship_entity_missing',
      'relationships.$contacts.remove',
    );
    const after = (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`)).json();
    assert.deepEqual(
      after.data.map((x: { id: string }) => x.id),
      [c1],
    );
    assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${list.id}`)).json().fields.$name.value, 'x');
  });

  test('update: rename only changes $name; add and remove (string or array), no-ops, mixed in one request', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [a, b, c, d] = await seedRecords(t, s.workspaceId, 'contact', 4);
    const list = (
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'orig', $objectType: 'contact' }, relationships: { $contacts: [a, b] } })
    ).json();
    const members = async () => {
      const r = (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`)).json();
      return { ids: r.data.map((x: { id: string }) => x.id).sort(), total: r.totalCount };
    };
    const upd = (body: unknown) => call(t, s.secret, 'POST', `/v1/lists/${list.id}`, body);

    const renamed = await upd({ fields: { $name: ' New ' } });
    assert.equal(renamed.statusCode, 200);
    assert.deepEqual(renamed.json(), { ...list, fields: { ...list.fields, $name: { value: 'New', valueType: 'TEXT' } } });
    assert.deepEqual(await members(), { ids: [a, b].sort(), total: 2 });

    const empty = await upd({});
    assert.deepEqual(empty.json(), renamed.json());

    await upd({ relationships: { $contacts: { add: a } } }); // already a member: no-op
    assert.deepEqual(await members(), { ids: [a, b].sort(), total: 2 });
    await upd({ relationships: { $contacts: { remove: [c] } } }); // not a member: no-op
    assert.deepEqual(await members(), { ids: [a, b].sort(), total: 2 });

    const mixed = await upd({ relationships: { $contacts: { add: [c, d, c, a], remove: b } } });
    assert.equal(mixed.statusCode, 200);
    assert.equal(mixed.json().fields.$name.value, 'New');
    assert.deepEqual(await members(), { ids: [a, c, d].sort(), total: 3 });

    await upd({ relationships: { $contacts: { remove: [a, c, d, b] } } });
    assert.deepEqual(await members(), { ids: [], total: 0 });
  });

  test('update refusals: same id in add and remove, bad $name, $objectType, unknown list', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [a, b] = await seedRecords(t, s.workspaceId, 'contact', 2);
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'n', $objectType: 'contact' }, relationships: { $contacts: [a] } })).json();
    const upd = (body: unknown, id = list.id) => call(t, s.secret, 'POST', `/v1/lists/${id}`, body);
    assertError(
      await upd({ relationships: { $contacts: { add: [b], remove: [a, b] } } }),
      400,
      'conflicting_membership_change',
      'relationships.$contacts.remove[1]',
    );
    assertError(await upd({ fields: { $name: '' } }), 400, 'invalid_value', 'fields.$name');
    assertError(await upd({ fields: { $objectType: 'account' } }), 400, 'unknown_field', 'fields.$objectType');
    assertError(await upd({ relationships: { $contacts: { add: [a], keep: [b] } } }), 400, 'unknown_field', 'relationships.$contacts.keep');
    // An operation with neither add nor remove changes nothing: refused as a record's empty one is.
    assertError(await upd({ fields: { $name: 'renamed' }, relationships: { $contacts: {} } }), 400, 'parameter_missing', 'relationships.$contacts');
    assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${list.id}`)).json().fields.$name.value, 'n');
    assertError(await upd({ relationships: { $contacts: { add: [a, 3] } } }), 400, 'invalid_type', 'relationships.$contacts.add[1]');
    assertError(await upd({ relationships: { $contacts: { add: [b, ''] } } }), 400, 'invalid_value', 'relationships.$contacts.add[1]');
    assertError(await upd({ relationships: { $contacts: { remove: '' } } }), 400, 'invalid_value', 'relationships.$contacts.remove');
    assertError(await upd({ fields: { $name: 'x' } }, 'lst_00000000000000000000000000'), 404, 'resource_not_found', 'id');
    const r = (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`)).json();
    assert.deepEqual(
      r.data.map((x: { id: string }) => x.id),
      [a],
    );
  });

  test('membership listings: entity shape, only members of the path type, two-type rule', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [c] = await seedRecords(t, s.workspaceId, 'contact', 1);
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'n', $objectType: 'contact' }, relationships: { $contacts: [c] } })).json();
    const res = (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`)).json();
    const e = res.data[0];
    assert.deepEqual(Object.keys(e).sort(), ['createdAt', 'externalId', 'fields', 'httpLink', 'id', 'relationships', 'updatedAt']);
    assert.equal(e.id, c);
    assert.equal(e.externalId, 'contact0');
    assert.match(e.createdAt, ISO);
    assert.match(e.updatedAt, ISO);
    // The record API's shape and names (docs/records.md): every field and relationship present.
    assert.deepEqual(e.fields, {
      $name: { value: { firstName: 'F0', lastName: 'L' }, valueType: 'FULL_NAME' },
      $email: { value: null, valueType: 'EMAIL' },
      $profilePhotoUrl: { value: null, valueType: 'URL' },
    });
    assert.deepEqual(e.relationships.$account, { cardinality: 'has_many', objectType: 'account', values: [] });
    assert.deepEqual(e, (await call(t, s.secret, 'GET', `/v1/contacts/${c}`)).json());
    for (const path of ['accounts', 'opportunities']) {
      assert.deepEqual((await call(t, s.secret, 'GET', `/v1/lists/${list.id}/${path}`)).json(), { data: [], object: 'list', totalCount: 0 });
    }
  });

  test('membership listings need both scopes', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'n', $objectType: 'account' } })).json();
    const url = `/v1/lists/${list.id}/accounts`;
    const onlyLists = await keyFor(t, s.workspaceId, s.userId, ['lists:read']);
    const onlyAccounts = await keyFor(t, s.workspaceId, s.userId, ['accounts:read']);
    const wrongPair = await keyFor(t, s.workspaceId, s.userId, ['lists:read', 'contacts:read']);
    const both = await keyFor(t, s.workspaceId, s.userId, ['lists:read', 'accounts:read']);
    assert.match(assertError(await call(t, onlyLists, 'GET', url), 403, 'insufficient_scope').message, /accounts:read/);
    assert.match(assertError(await call(t, onlyAccounts, 'GET', url), 403, 'insufficient_scope').message, /lists:read/);
    assertError(await call(t, wrongPair, 'GET', url), 403, 'insufficient_scope');
    assert.equal((await call(t, both, 'GET', url)).statusCode, 200);
    assert.equal((await call(t, both, 'GET', `/v1/lists/${list.id}/contacts`)).statusCode, 403);
    assertError(await call(t, both, 'POST', '/v1/lists', { fields: { $name: 'n', $objectType: 'account' } }), 403, 'insufficient_scope');
    assertError(await call(t, both, 'POST', `/v1/lists/${list.id}`, {}), 403, 'insufficient_scope');
  });

  test("another workspace's list is a 404 exactly like a random id, on every endpoint", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const other = await seedWorkspace(t);
    const theirs = (await call(t, other.secret, 'POST', '/v1/lists', { fields: { $name: 'secret', $objectType: 'contact' } })).json();
    const random = 'lst_01m00000000000000000000000';
    const strip = (b: any) => ({ ...b.error, requestId: undefined, message: b.error.message.replace(/"[^"]+"/, '"ID"') });
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['POST', '', { fields: { $name: 'x' } }],
      ['GET', '/contacts', undefined],
      ['GET', '/accounts', undefined],
    ] as const) {
      const a = await call(t, s.secret, method, `/v1/lists/${theirs.id}${suffix}`, body);
      const b = await call(t, s.secret, method, `/v1/lists/${random}${suffix}`, body);
      // The parameter named is the path's: {id}, or {listId} for a page of members.
      assertError(a, 404, 'resource_not_found', suffix === '' ? 'id' : 'listId');
      assert.deepEqual(strip(a.json()), strip(b.json()));
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 0);
    assert.equal((await call(t, other.secret, 'GET', `/v1/lists/${theirs.id}`)).json().fields.$name.value, 'secret');
  });

  test('an empty or over-long list id in the path is invalid_parameter naming it, as a record id is', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const long = `lst_${'a'.repeat(252)}`;
    const create = { fields: { $name: 'n', $objectType: 'contact' } };
    for (const [method, path, body, param] of [
      ['GET', '/v1/lists/', undefined, 'id'],
      // A trailing slash on the create: answered for the path, not as a create body sent to an update.
      ['POST', '/v1/lists/', create, 'id'],
      ['DELETE', '/v1/lists/', undefined, 'id'],
      ['GET', '/v1/lists//contacts', undefined, 'listId'],
      ['GET', `/v1/lists/${long}`, undefined, 'id'],
      ['POST', `/v1/lists/${long}`, { fields: { $name: 'x' } }, 'id'],
      ['DELETE', `/v1/lists/${long}`, undefined, 'id'],
      ['GET', `/v1/lists/${long}/contacts`, undefined, 'listId'],
    ] as const) {
      assertError(await call(t, s.secret, method, path, body), 400, 'invalid_parameter', param);
    }
    // The same bounds as /v1/accounts/{id}: 255 characters are an id that names nothing.
    assertError(await call(t, s.secret, 'GET', `/v1/accounts/${long}`), 400, 'invalid_parameter', 'id');
    assertError(await call(t, s.secret, 'GET', `/v1/lists/${long.slice(1)}`), 404, 'resource_not_found', 'id');
    assertError(await call(t, s.secret, 'GET', `/v1/lists/${long.slice(1)}/accounts`), 404, 'resource_not_found', 'listId');
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 0);
  });

  test('GET /v1/lists is newest first with ties by id; totalCount counts only this workspace', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const other = await seedWorkspace(t);
    await call(t, other.secret, 'POST', '/v1/lists', { fields: { $name: 'theirs', $objectType: 'contact' } });
    const made: string[] = [];
    for (let i = 0; i < 4; i++) {
      made.push((await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: `l${i}`, $objectType: 'contact' } })).json().id);
      await sleep(3);
    }
    const res = (await call(t, s.secret, 'GET', '/v1/lists')).json();
    assert.equal(res.totalCount, 4);
    assert.deepEqual(
      res.data.map((l: { id: string }) => l.id),
      [...made].reverse(),
    );
  });
});
