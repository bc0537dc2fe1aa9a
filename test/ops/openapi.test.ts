// The OpenAPI document: generated from the routes, complete for every operation, and identical to
// the committed docs/openapi.json (run `npm run openapi` after changing a route).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ERROR_CODES } from '../../src/lib/errors.ts';
import { formatDocument, OPENAPI_FILE } from '../../src/docs/openapi-document.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { pipelineRoutes } from '../helpers/pipeline-routes.ts';

type Operation = Record<string, any>;

function operations(doc: any): Array<{ path: string; method: string; op: Operation }> {
  const out = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) for (const [method, op] of Object.entries<any>(item)) out.push({ path, method, op });
  return out;
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let extra: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite');
    extra = await buildTestApp('sqlite', { routes: pipelineRoutes });
  });
  after(async () => {
    await t.close();
    await extra.close();
  });

  test('served at /openapi.json and identical to the committed docs/openapi.json', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /application\/json/);
    const committed = readFileSync(OPENAPI_FILE, 'utf8');
    assert.equal(formatDocument(res.json()), committed, 'docs/openapi.json is out of date: run `npm run openapi` and commit it');
  });

  test('every operation declares its id, scopes, rate category, security, version header and errors', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      type: 'http',
      scheme: 'bearer',
      description: doc.components.securitySchemes.bearerAuth.description,
    });
    assert.ok(doc.components.schemas.Error, 'the error shape is a component');
    const ops = operations(doc);
    assert.ok(ops.length >= 1);
    const ids = ops.map((o) => o.op.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    for (const { path, op } of ops) {
      const where = `${op.operationId} (${path})`;
      assert.ok(path.startsWith('/v1/'), `${where}: only API routes are documented`);
      assert.match(op.operationId, /^[a-z][A-Za-z]+$/, where);
      assert.ok(Array.isArray(op['x-scopes']), `${where}: x-scopes`);
      assert.ok(['Read', 'Write', 'Search'].includes(op['x-rate-category']), `${where}: x-rate-category`);
      assert.deepEqual(op.security, [{ bearerAuth: [] }], where);
      const version = op.parameters.find((p: any) => p.in === 'header' && p.name === 'Service-Version');
      assert.equal(version?.required, true, `${where}: Service-Version header`);
      assert.deepEqual(version.schema.enum, ['2026-03-01']);
      for (const status of ['400', '401', '429', '500']) {
        const r = op.responses[status];
        assert.ok(r, `${where}: ${status} documented`);
        assert.equal(r.content['application/json'].schema.$ref, '#/components/schemas/Error', `${where}: ${status} has the error shape`);
        for (const [code, ex] of Object.entries<any>(r.content['application/json'].examples)) {
          assert.equal(ERROR_CODES[code as keyof typeof ERROR_CODES], Number(status), `${where}: ${code} belongs to ${status}`);
          assert.equal(ex.value.error.code, code);
        }
      }
      assert.ok(op.responses['429'].headers['Retry-After'], `${where}: 429 documents Retry-After`);
      const success = Object.keys(op.responses).find((s) => s.startsWith('2'));
      assert.ok(success, `${where}: a success response`);
      assert.ok(op.responses[success].headers['X-RateLimit-Remaining'], `${where}: success documents the rate-limit headers`);
      // A replay under an Idempotency-Key is marked (docs/design.md §Idempotency); nothing else is one.
      const replayed = op.responses[success].headers['Idempotent-Replayed'];
      if (op['x-idempotent']) assert.deepEqual(replayed?.schema, { type: 'string', enum: ['true'] }, `${where}: success documents Idempotent-Replayed`);
      else assert.equal(replayed, undefined, `${where}: no Idempotency-Key, no replay`);
    }
    const validate = ops.find((o) => o.op.operationId === 'validateCredential')!.op;
    assert.deepEqual(validate['x-scopes'], []);
    assert.equal(validate['x-rate-category'], 'Read');
    assert.ok(validate.responses['200'].content['application/json'].example, 'the example of the response schema');
  });

  test('what a route declares decides its documented errors and headers', async () => {
    const doc = (await extra.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const byId = new Map(operations(doc).map((o) => [o.op.operationId, o.op]));
    const echo = byId.get('testEcho')!;
    assert.deepEqual(echo['x-scopes'], ['lists:create']);
    assert.equal(echo['x-rate-category'], 'Write');
    assert.ok(echo.responses['403'].content['application/json'].examples.insufficient_scope);
    assert.ok(echo.responses['415'] && echo.responses['413'], 'a JSON body can be refused');
    assert.ok(echo.responses['400'].content['application/json'].examples.unknown_field);
    assert.ok(echo.requestBody, 'the body schema');
    const users = byId.get('testCreateUser')!;
    assert.equal(users['x-idempotent'], true);
    assert.ok(users.parameters.some((p: any) => p.name === 'Idempotency-Key' && p.in === 'header'));
    assert.ok(users.responses['409'] && users.responses['422'], 'idempotency conflicts are documented');
    const page = byId.get('testPage')!;
    assert.equal(page.responses['403'], undefined, 'no scope, no 403');
    assert.ok(page.parameters.some((p: any) => p.in === 'query' && p.name === 'limit'));
    assert.ok(page.responses['400'].content['application/json'].examples.invalid_parameter);
  });

  test('every object schema of a request body or response is closed', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const open: string[] = [];
    const seen = new Set<unknown>();
    // An object with named properties must say what else it takes: nothing (false), or a schema
    // for the values of a map (`fields`); left unsaid, a response could grow keys unnoticed.
    const walk = (node: unknown, where: string): void => {
      if (node === null || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      const n = node as Record<string, unknown>;
      if (typeof n.$ref === 'string') {
        const target = n.$ref.replace('#/components/schemas/', '');
        return walk(doc.components.schemas[target], `${where} → ${target}`);
      }
      if (n.properties !== undefined && n.additionalProperties === undefined && n.unevaluatedProperties === undefined) open.push(where);
      for (const [k, v] of Object.entries(n)) if (k !== 'examples' && k !== 'example') walk(v, `${where}/${k}`);
    };
    for (const { path, method, op } of operations(doc)) {
      walk(op.requestBody?.content?.['application/json']?.schema, `${method.toUpperCase()} ${path} body`);
      for (const [status, r] of Object.entries<any>(op.responses)) walk(r.content?.['application/json']?.schema, `${method.toUpperCase()} ${path} ${status}`);
    }
    assert.deepEqual(open, []);
  });

  test("a delete's body is optional, and an object when sent (docs/trash.md §Deleting)", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const deletes = operations(doc).filter((o) => o.method === 'delete');
    assert.equal(deletes.length, 8);
    for (const { path, op } of deletes)
      assert.deepEqual(
        op.requestBody,
        { required: false, content: { 'application/json': { schema: { type: 'object', properties: {}, additionalProperties: false } } } },
        `DELETE ${path}`,
      );
  });

  test("the other optional bodies (a file's complete and cancel, an enrichment run) are not required and never null (docs/errors.md §Request bodies)", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const optional = operations(doc).filter((o) => /\/(complete|cancel)$|^\/v1\/enrichmentRun\/(accounts|contacts)\//.test(o.path) && o.method === 'post');
    assert.equal(optional.length, 4);
    for (const { path, op } of optional) {
      assert.equal(op.requestBody.required, false, path);
      assert.equal(op.requestBody.content['application/json'].schema.type, 'object', path);
    }
  });

  test('a path the reference refuses is a 404 in the one error shape (docs/errors.md)', async () => {
    // Its static files turn a `..`, a `\` or a NUL away with 403 in Fastify's own shape.
    for (const url of ['/docs/static/..%5c..%5cpackage.json', '/docs/static/%00', '/docs/static/....//....//package.json', '/docs/nothing-here']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().error.code, 'route_not_found', url);
      assert.equal(res.json().error.requestId, res.headers['x-request-id'], url);
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' })).statusCode, 200);
  });

  test('health, metrics and docs routes stay out of the document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const p of Object.keys(doc.paths)) assert.ok(!/healthz|readyz|metrics|docs|openapi/.test(p), p);
  });
});
