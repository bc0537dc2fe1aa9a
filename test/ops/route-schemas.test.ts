// Route schemas are compiled by the first request that uses them (docs/performance.md §Schemas
// compiled on first use): a built app holds none compiled, a route's first request validates and
// serializes as every later one does, and every schema of the app compiles.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileRouteSchemas } from '../../src/app.ts';
import { buildTestApp } from '../helpers/app.ts';

const schema = {
  body: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
  response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
};

test('a built app has compiled no route schema; the first request compiles and uses its route’s, and every schema compiles', async () => {
  const t = await buildTestApp('sqlite', {
    routes: (app) => app.post('/internal/echo', { schema }, async (req) => ({ ...(req.body as object), extra: true })),
  });
  try {
    // The first call of the route's validator refuses a bad body as any later one does.
    const bad = await t.app.inject({ method: 'POST', url: '/internal/echo', payload: { n: 'x' } });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(JSON.parse(bad.body).error.param, 'n');
    const again = await t.app.inject({ method: 'POST', url: '/internal/echo', payload: { n: 1, m: 2 } });
    assert.equal(again.statusCode, 400, again.body);
    // The serializer writes only what the response schema declares.
    const ok = await t.app.inject({ method: 'POST', url: '/internal/echo', payload: { n: 1 } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.body, '{"n":1}');
    // Every other route's schemas were left for their first request, and all of them compile.
    const compiled = compileRouteSchemas(t.app);
    assert.ok(compiled > 100, `${compiled} schemas left to compile`);
    assert.equal(compileRouteSchemas(t.app), 0);
  } finally {
    await t.close();
  }
});
