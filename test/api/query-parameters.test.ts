// Query parameters (docs/errors.md §Query parameters) on both databases: every operation refuses
// a query parameter it does not define with 400 invalid_parameter naming it, whether it defines
// some (the listings, a field's history) or none (retrieves, definitions, writes, deletes); a
// refused write changes nothing. A parameter sent twice is named as given more than once. Every
// answer is checked against the served OpenAPI document.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { loadDocument, type Operation, operationFor, operationsOf, responseChecker, urlFor } from '../helpers/openapi-ops.ts';

eachDialect('query parameters', (ctx) => {
  let ops: Operation[];
  const checker = responseChecker();
  before(async () => {
    ops = operationsOf(await loadDocument(ctx()));
  });

  async function api(s: Seeded, method: Operation['method'], url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    const why = checker.check(operationFor(ops, method, url), res);
    assert.equal(why, null, `${method} ${url}: ${why}`);
    return res;
  }
  async function refused(s: Seeded, method: Operation['method'], url: string, param: string, body?: unknown) {
    const res = await api(s, method, url, body);
    assert.equal(res.statusCode, 400, `${method} ${url}: ${res.body}`);
    const error = res.json().error;
    assert.equal(error.code, 'invalid_parameter', `${method} ${url}: ${res.body}`);
    assert.equal(error.param, param, `${method} ${url}: ${res.body}`);
    return error as { message: string };
  }

  test('every read and delete refuses a query parameter it does not define, before looking the id up', async () => {
    const s = await seedWorkspace(ctx());
    // A listing of a custom type reads its filters by the type's definitions, so the type exists.
    await defineObjectType(operatorCtx(ctx().deps.db.kysely, s.workspaceId), { slug: 'project', label: 'Projects' });
    const reads = ops.filter((op) => op.method === 'GET' || op.method === 'DELETE');
    assert.ok(reads.length > 40, `${reads.length} operations`);
    for (const op of reads) {
      const params = Object.fromEntries(op.pathParams.map((p) => [p.name, p.name === 'fieldKey' ? '$name' : p.name === 'entitySlug' ? 'project' : 'x']));
      await refused(s, op.method, urlFor(op, params, { zz: '1' }), 'zz');
    }
  });

  test('a retrieve, the definitions and the object types: an unknown parameter is refused, the plain request answers', async () => {
    const s = await seedWorkspace(ctx());
    const acc = (await api(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json();
    const error = await refused(s, 'GET', `/v1/accounts/${acc.id}?expand=contacts`, 'expand');
    assert.match(error.message, /"expand": it is not a known parameter/);
    await refused(s, 'GET', `/v1/accounts/${acc.id}?limit=1`, 'limit');
    await refused(s, 'GET', '/v1/accounts/definitions?objectType=account', 'objectType');
    await refused(s, 'GET', '/v1/objects?limit=1', 'limit');
    await refused(s, 'GET', `/v1/members/${s.userId}?fields=id`, 'fields');
    await refused(s, 'GET', '/v1/auth/validate?key=1', 'key');
    for (const url of [`/v1/accounts/${acc.id}`, '/v1/accounts/definitions', '/v1/objects', `/v1/members/${s.userId}`, '/v1/auth/validate'])
      assert.equal((await api(s, 'GET', url)).statusCode, 200, url);
  });

  test('a create, an update or a delete with an unknown parameter is refused and changes nothing', async () => {
    const s = await seedWorkspace(ctx());
    const acc = (await api(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json();
    await refused(s, 'POST', '/v1/accounts?dryRun=true', 'dryRun', { fields: { $name: 'Other' } });
    await refused(s, 'POST', `/v1/accounts/${acc.id}?notify=false`, 'notify', { fields: { $name: 'Renamed' } });
    await refused(s, 'DELETE', `/v1/accounts/${acc.id}?force=true`, 'force');
    await refused(s, 'POST', '/v1/lists?x=1', 'x', { fields: { $name: 'L', $objectType: 'account' } });
    const page = (await api(s, 'GET', '/v1/accounts')).json();
    assert.deepEqual(
      page.data.map((a: { id: string; fields: { $name: { value: string } } }) => [a.id, a.fields.$name.value]),
      [[acc.id, 'Acme']],
    );
    assert.equal(page.totalCount, 1);
    assert.equal((await api(s, 'GET', '/v1/lists')).json().totalCount, 0);
  });

  test('a parameter sent twice is named as given more than once', async () => {
    const s = await seedWorkspace(ctx());
    const acc = (await api(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json();
    for (const [url, param] of [
      ['/v1/lists?limit=1&limit=2', 'limit'],
      ['/v1/members?offset=0&offset=0', 'offset'],
      ['/v1/accounts?limit=5&limit=5', 'limit'],
      [`/v1/accounts/${acc.id}/fields/$name/history?after=a&after=b`, 'after'],
    ] as const) {
      const error = await refused(s, 'GET', url, param);
      assert.match(error.message, new RegExp(`"${param}": it is given more than once`), url);
    }
  });
});
