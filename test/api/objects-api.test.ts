// Custom objects (docs/activities.md §Custom objects) on both databases: operators define a type,
// its fields and relationships; the API lists the types and serves their records through the
// record engine; an unknown slug or an id of another type is not found on every route. Every
// answer is validated against our own OpenAPI document.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField, addRelationship, loadDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { importInto } from '../helpers/emails.ts';
import { loadDocument, type Operation, operationFor, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';

eachDialect('custom objects API', (ctx) => {
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
  async function refused(s: Seeded, method: 'GET' | 'POST', url: string, body: unknown, status: number, code: string, param?: string) {
    const res = await api(s, method, url, body);
    assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    assert.equal(res.json().error?.code, code, `${method} ${url}: ${res.body}`);
    if (param !== undefined) assert.equal(res.json().error.param, param);
  }

  async function withProjects(s: Seeded) {
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await defineObjectType(op, { slug: 'invoice', label: 'Invoices' });
    await addField(op, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
    await addField(op, { objectType: 'project', key: 'budget', label: 'Budget', valueType: 'CURRENCY', currency: 'EUR' });
    await addRelationship(op, { objectType: 'project', key: 'client', label: 'Client', cardinality: 'has_one', targetType: 'account' });
    await addRelationship(op, { objectType: 'account', key: 'projects', label: 'Projects', cardinality: 'has_many', targetType: 'project' });
    return op;
  }

  test('types by slug; definitions without system fields; create, retrieve, update, list; relationships to and from system types', async () => {
    const s = await seedWorkspace(ctx());
    assert.deepEqual(await ok(s, 'GET', '/v1/objects'), { data: [] });
    const op = await withProjects(s);
    assert.deepEqual(await ok(s, 'GET', '/v1/objects'), {
      data: [
        { objectType: 'invoice', label: 'Invoices' },
        { objectType: 'project', label: 'Projects' },
      ],
    });
    const defs = await ok(s, 'GET', '/v1/objects/project/definitions');
    assert.equal(defs.objectType, 'project');
    // Two definitions made in one millisecond have no order between them (docs/records.md §Definitions).
    assert.deepEqual(Object.keys(defs.fieldDefinitions).sort(), ['budget', 'name']);
    assert.deepEqual(Object.keys(defs.relationshipDefinitions), ['client']);
    assert.equal((await loadDefinitions(op, { objectType: 'invoice' }))?.fields.size, 0);

    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const rec = await ok(s, 'POST', '/v1/objects/project/values', { fields: { name: 'Apollo', budget: 1200 }, relationships: { client: acc.id } });
    assert.match(rec.id, /^rec_/);
    assert.deepEqual(rec.fields.budget, { value: 1200, valueType: 'CURRENCY' });
    assert.deepEqual(rec.relationships.client, { cardinality: 'has_one', objectType: 'account', values: [acc.id] });
    assert.deepEqual(await ok(s, 'GET', `/v1/objects/project/values/${rec.id}`), rec);
    const linked = await ok(s, 'POST', `/v1/accounts/${acc.id}`, { relationships: { projects: { add: rec.id } } });
    assert.deepEqual(linked.relationships.projects.values, [rec.id]);

    const updated = await ok(s, 'POST', `/v1/objects/project/values/${rec.id}`, { fields: { budget: null }, relationships: { client: { replace: null } } });
    assert.equal(updated.fields.budget.value, null);
    assert.deepEqual(updated.relationships.client.values, []);
    await refused(s, 'POST', '/v1/objects/project/values', { fields: { $name: 'x' } }, 400, 'unknown_field', 'fields.$name');
    await refused(s, 'POST', '/v1/objects/project/values', { fields: {}, relationships: { client: 'acc_missing' } }, 400, 'relationship_entity_missing');
    await refused(s, 'POST', `/v1/accounts/${acc.id}`, { relationships: { projects: { add: acc.id } } }, 400, 'relationship_entity_missing');

    const second = await ok(s, 'POST', '/v1/objects/project/values', { fields: { name: 'Gemini' } });
    const page = await ok(s, 'GET', '/v1/objects/project?limit=1');
    assert.equal(page.totalCount, 2);
    assert.equal(page.data[0].id, second.id);
    assert.equal((await ok(s, 'GET', '/v1/objects/invoice')).totalCount, 0);
  });

  test('an unknown slug is not found on every route, and so is an id of another type', async () => {
    const s = await seedWorkspace(ctx());
    await withProjects(s);
    const rec = await ok(s, 'POST', '/v1/objects/project/values', { fields: { name: 'Apollo' } });
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    for (const slug of ['nothing', 'account', 'Project']) {
      await refused(s, 'GET', `/v1/objects/${slug}`, undefined, 404, 'resource_not_found');
      await refused(s, 'GET', `/v1/objects/${slug}/definitions`, undefined, 404, 'resource_not_found');
      await refused(s, 'POST', `/v1/objects/${slug}/values`, { fields: {} }, 404, 'resource_not_found');
      await refused(s, 'GET', `/v1/objects/${slug}/values/${rec.id}`, undefined, 404, 'resource_not_found');
      await refused(s, 'POST', `/v1/objects/${slug}/values/${rec.id}`, { fields: {} }, 404, 'resource_not_found');
    }
    await refused(s, 'GET', `/v1/objects/invoice/values/${rec.id}`, undefined, 404, 'resource_not_found');
    await refused(s, 'POST', `/v1/objects/invoice/values/${rec.id}`, { fields: {} }, 404, 'resource_not_found');
    await refused(s, 'GET', `/v1/objects/project/values/${acc.id}`, undefined, 404, 'resource_not_found');
    // Custom-object listings take filters (docs/filtering.md); any other parameter is refused.
    await refused(s, 'GET', '/v1/objects/project?nope=1', undefined, 400, 'invalid_parameter');
    await refused(s, 'GET', '/v1/objects/project?name%5BgreaterThan%5D=1', undefined, 400, 'invalid_parameter');

    // Another workspace does not see the type at all.
    const other = await seedWorkspace(ctx());
    await refused(other, 'GET', '/v1/objects/project', undefined, 404, 'resource_not_found');
    await refused(other, 'GET', `/v1/objects/project/values/${rec.id}`, undefined, 404, 'resource_not_found');
    assert.deepEqual(await ok(other, 'GET', '/v1/objects'), { data: [] });
  });

  test('slug rules and reserved names; idempotent creates', async () => {
    const s = await seedWorkspace(ctx());
    const op = await withProjects(s);
    for (const slug of ['account', 'note', 'member', 'channel', 'Bad', '1x', ''])
      await assert.rejects(defineObjectType(op, { slug, label: 'X' }), /must match|system type/);
    // Their events would share a prefix with those of the enrichment runs and the webhook test.
    for (const slug of ['enrichment_run', 'webhook']) await assert.rejects(defineObjectType(op, { slug, label: 'X' }), /events of another object/);
    // An import takes them: the export of a workspace that made one before the rule imports again.
    await importInto(ctx(), s.workspaceId, [{ object: 'definition', definition: 'objectType', slug: 'webhook', label: 'Hooks' }]);
    assert.equal(
      (await call(ctx(), s.secret, 'GET', '/v1/objects')).json().data.some((o: { objectType: string }) => o.objectType === 'webhook'),
      true,
    );
    await assert.rejects(defineObjectType(op, { slug: 'project', label: 'Again' }), /exists/);
    const key = { 'idempotency-key': 'project-once' };
    const all = await Promise.all(
      Array.from({ length: 10 }, () => call(ctx(), s.secret, 'POST', '/v1/objects/project/values', { fields: { name: 'Once' } }, key)),
    );
    const done = all.filter((r) => r.statusCode === 200);
    assert.ok(done.length >= 1);
    for (const r of all) assert.ok(r.statusCode === 200 || r.json().error.code === 'idempotency_conflict', r.body);
    assert.equal(new Set(done.map((r) => r.json().id)).size, 1);
    assert.equal((await ok(s, 'GET', '/v1/objects/project')).totalCount, 1);
  });

  // An import names users, mailboxes, the workspace, definitions and records by these objects, and
  // a relationship's target by its type: a link to a record of a type so named was looked up among
  // those objects, so the workspace's export did not import again (`no user with externalId …`).
  test('a new type takes no name of an object of rolodex import', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    for (const slug of ['user', 'mailbox', 'workspace', 'definition', 'record'])
      await assert.rejects(defineObjectType(op, { slug, label: 'X' }), (e: Error & { param?: string }) => {
        assert.match(e.message, /names a kind of object of rolodex import/);
        assert.equal(e.param, 'slug');
        return true;
      });
    assert.deepEqual((await ok(s, 'GET', '/v1/objects')).data, []);
    // An import takes them: the export of a workspace that made one before the rule imports again.
    await importInto(ctx(), s.workspaceId, [{ object: 'definition', definition: 'objectType', slug: 'user', label: 'People' }]);
    assert.deepEqual((await ok(s, 'GET', '/v1/objects')).data, [{ objectType: 'user', label: 'People' }]);
  });

  // A slug that names a property every JavaScript object inherits was read as a system type's
  // catalogue (Object itself): its definitions, records and a relationship to it answered 500.
  test('a type named constructor is a custom type like any other', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'constructor', label: 'Builders' });
    await addField(op, { objectType: 'constructor', key: 'name', label: 'Name', valueType: 'TEXT' });
    await addRelationship(op, { objectType: 'account', key: 'builder', label: 'Builder', cardinality: 'has_one', targetType: 'constructor' });
    assert.deepEqual(Object.keys((await ok(s, 'GET', '/v1/objects/constructor/definitions')).fieldDefinitions), ['name']);
    const rec = await ok(s, 'POST', '/v1/objects/constructor/values', { fields: { name: 'Bob' } });
    assert.equal((await ok(s, 'GET', `/v1/objects/constructor/values/${rec.id}`)).fields.name.value, 'Bob');
    assert.deepEqual(
      (await ok(s, 'GET', '/v1/objects/constructor?name=bob')).data.map((r: { id: string }) => r.id),
      [rec.id],
    );
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' }, relationships: { builder: rec.id } });
    assert.deepEqual(acc.relationships.builder.values, [rec.id]);
    await importInto(ctx(), s.workspaceId, [{ object: 'record', objectType: 'constructor', externalId: 'b-2', fields: { name: { value: 'Ann' } } }]);
    assert.equal((await ok(s, 'GET', '/v1/objects/constructor')).totalCount, 2);
  });
});
