// Fixed, readable replays of what the fuzzer found (docs/reliability.md, "Bugs found"), so each
// stays fixed even if a change of seed or schema stops the fuzzer from reaching it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eachDialect, headers, seedWorkspace } from '../helpers/app.ts';
import { pipelineRoutes } from '../helpers/pipeline-routes.ts';

function assertShape(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string) {
  assert.equal(res.statusCode, status, JSON.stringify(res.json()));
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, code);
  assert.equal(body.error.requestId, res.headers['x-request-id']);
  assert.equal(res.headers['service-version'], '2026-03-01');
}

eachDialect(
  'fuzz regressions',
  (ctx) => {
    test('a path that is not valid percent-encoding gets 400 invalid_parameter in the error shape', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (const bad of ['%zz', '%ED%A0%80', '%', '%C0%AF']) {
        const res = await t.app.inject({ method: 'GET', url: `/v1/messages/${bad}`, headers: headers(s.secret) });
        assertShape(res, 400, 'invalid_parameter');
      }
    });

    test('a path parameter longer than the router cap is judged by the route schema, not answered with a bare 414', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const ok = await t.app.inject({ method: 'GET', url: `/v1/messages/msg_${'a'.repeat(200)}`, headers: headers(s.secret) });
      assertShape(ok, 404, 'resource_not_found');
      const long = await t.app.inject({ method: 'GET', url: `/v1/messages/${'a'.repeat(3000)}`, headers: headers(s.secret) });
      assertShape(long, 400, 'invalid_parameter');
    });

    test('a NUL byte in a path parameter, a query value or a body string is a 400, on PostgreSQL too', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      assertShape(await t.app.inject({ method: 'GET', url: '/v1/messages/msg_%00x', headers: headers(s.secret) }), 400, 'invalid_parameter');
      assertShape(await t.app.inject({ method: 'GET', url: '/v1/messages?limit=1%00', headers: headers(s.secret) }), 400, 'invalid_parameter');
      const send = (payload: string) =>
        t.app.inject({ method: 'POST', url: '/v1/test/echo', headers: headers(s.secret, { 'content-type': 'application/json' }), payload });
      const inBody = await send('{"name":"a\\u0000b"}');
      assertShape(inBody, 400, 'invalid_value');
      assert.equal(inBody.json().error.param, 'name');
      const inKey = await send('{"name":"a","nested":{"tags":["x","\\u0000"]}}');
      assert.equal(inKey.json().error.param, 'nested.tags[1]');
      assert.equal((await send('{"name":"ok"}')).statusCode, 200);
    });

    test('half of a surrogate pair in a body string or key is a 400, never stored as U+FFFD; a whole pair is a character', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const send = (payload: string) =>
        t.app.inject({ method: 'POST', url: '/v1/test/echo', headers: headers(s.secret, { 'content-type': 'application/json' }), payload });
      for (const [payload, param] of [
        ['{"name":"a\\ud800b"}', 'name'],
        ['{"name":"x","nested":{"tags":["\\udc00"]}}', 'nested.tags[0]'],
        ['{"name":"x","nested":{"\\ud83d":1}}', 'nested.\ud83d'],
      ] as const) {
        const res = await send(payload);
        assertShape(res, 400, 'invalid_value');
        assert.equal(res.json().error.param, param, payload);
      }
      const pair = await send('{"name":"\\ud83d\\ude00"}');
      assert.equal(pair.statusCode, 200, pair.body);
    });

    test('a $objectType naming a member of Object.prototype is a 400, not a 500', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/lists',
          headers: headers(s.secret, { 'content-type': 'application/json' }),
          payload: JSON.stringify({ fields: { $name: 'x', $objectType: name } }),
        });
        assertShape(res, 400, 'invalid_value');
        assert.equal(res.json().error.param, 'fields.$objectType');
      }
    });
  },
  { routes: pipelineRoutes },
);
