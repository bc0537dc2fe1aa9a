// The request pipeline of docs/design.md §Requests on both databases: authentication, version
// header, scopes, request ids, the error shape, and JSON input rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKey, revokeKey } from '../../src/auth/service.ts';
import { call, eachDialect, headers, keyFor, seedWorkspace, VERSION } from '../helpers/app.ts';
import { pipelineRoutes } from '../helpers/pipeline-routes.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';

function assertError(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string, param?: string) {
  assert.equal(res.statusCode, status, JSON.stringify(res.json()));
  const body = res.json();
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(body.error.requestId, res.headers['x-request-id']);
  if (param !== undefined) assert.equal(body.error.param, param);
  return body.error;
}

eachDialect(
  'pipeline',
  (ctx) => {
    test('validate reports a scoped user key exactly', async () => {
      const t = ctx();
      const s = await seedWorkspace(t, { scopes: ['lists:read'] });
      const res = await call(t, s.secret, 'GET', '/v1/auth/validate');
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { active: true, tokenType: 'api_key', subjectType: 'user', scopes: ['lists:read'] });
      assert.equal(res.headers['service-version'], VERSION);
      assert.match(String(res.headers['x-request-id']), /^req_/);
    });

    test('a full-access workspace key reports scopes []', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const secret = await keyFor(t, s.workspaceId, null, null);
      const res = await call(t, secret, 'GET', '/v1/auth/validate');
      assert.deepEqual(res.json(), { active: true, tokenType: 'api_key', subjectType: 'workspace', scopes: [] });
    });

    test('missing, malformed, unknown, revoked and expired keys get 401', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const noKey = await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { 'service-version': VERSION } });
      assertError(noKey, 401, 'missing_api_key', 'Authorization');
      assert.match(String(noKey.headers['www-authenticate']), /^Bearer/);
      for (const bad of ['garbage', 'Basic abc', s.secret.slice(0, -1) + (s.secret.endsWith('A') ? 'B' : 'A')]) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/v1/auth/validate',
          headers: { authorization: bad.startsWith('Basic') ? bad : `Bearer ${bad}`, 'service-version': VERSION },
        });
        assert.equal(res.statusCode, 401, bad);
      }
      const revoked = await createKey(operatorCtx(t.deps.db.kysely, s.workspaceId), { userId: null, scopes: null, expiresInMs: null });
      assert.equal((await call(t, revoked.secret, 'GET', '/v1/auth/validate')).statusCode, 200);
      await revokeKey(systemCtx(t.deps.db.kysely), { id: revoked.id });
      await new Promise((r) => setTimeout(r, 1100)); // the key cache lives at most one second
      assertError(await call(t, revoked.secret, 'GET', '/v1/auth/validate'), 401, 'invalid_api_key');
      const expired = await createKey(operatorCtx(t.deps.db.kysely, s.workspaceId), { userId: null, scopes: null, expiresInMs: 50 });
      await new Promise((r) => setTimeout(r, 80));
      const e = assertError(await call(t, expired.secret, 'GET', '/v1/auth/validate'), 401, 'invalid_api_key');
      assert.match(e.message, /expired/);
    });

    test('Service-Version missing or other gets 400 version_header, after authentication', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const missing = await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { authorization: `Bearer ${s.secret}` } });
      const err = assertError(missing, 400, 'version_header', 'Service-Version');
      assert.match(err.message, /2026-03-01/);
      assertError(await call(t, s.secret, 'GET', '/v1/auth/validate', undefined, { 'service-version': '2025-01-01' }), 400, 'version_header');
      const both = await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { 'service-version': 'x' } });
      assertError(both, 401, 'missing_api_key');
    });

    test('a well-formed incoming X-Request-Id is kept, a malformed one replaced', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const kept = await call(t, s.secret, 'GET', '/v1/auth/validate', undefined, { 'x-request-id': 'client-trace-42' });
      assert.equal(kept.headers['x-request-id'], 'client-trace-42');
      const replaced = await call(t, s.secret, 'GET', '/v1/auth/validate', undefined, { 'x-request-id': 'bad id with spaces' });
      assert.match(String(replaced.headers['x-request-id']), /^req_[0-9a-z]{26}$/);
    });

    test('unknown routes get 404 route_not_found in the error shape', async () => {
      const t = ctx();
      const res = await t.app.inject({ method: 'GET', url: '/v1/nothing-here' });
      assertError(res, 404, 'route_not_found');
      assert.equal(res.json().error.type, 'not_found');
    });

    test('a missing scope is 403 insufficient_scope naming it', async () => {
      const t = ctx();
      const s = await seedWorkspace(t, { scopes: ['lists:read'] });
      const err = assertError(await call(t, s.secret, 'POST', '/v1/test/echo', { name: 'a' }), 403, 'insufficient_scope');
      assert.match(err.message, /lists:create/);
    });

    test('JSON input rules: 415, invalid_json, unknown_field, invalid_type, parameter_missing, 413', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const send = (payload: string, contentType = 'application/json') =>
        t.app.inject({ method: 'POST', url: '/v1/test/echo', headers: headers(s.secret, { 'content-type': contentType }), payload });
      assert.deepEqual((await send('{"name":"ok","count":3}')).json(), { received: { name: 'ok', count: 3 } });
      const e415 = assertError(await send('name=x', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
      assert.equal(e415.type, 'unsupported_media_type');
      assertError(await send('{"name":'), 400, 'invalid_json');
      assertError(await send('{"__proto__":{"x":1},"name":"a"}'), 400, 'invalid_json');
      assertError(await send('{"name":"a","extra":1}'), 400, 'unknown_field', 'extra');
      assertError(await send('{"name":"a","nested":{"tags":[],"zzz":true}}'), 400, 'unknown_field', 'nested.zzz');
      assertError(await send('{"name":"a","nested":{"tags":["x",2]}}'), 400, 'invalid_type', 'nested.tags[1]');
      assertError(await send('{"name":1}'), 400, 'invalid_type', 'name');
      assertError(await send('{"name":"a","count":"10"}'), 400, 'invalid_type', 'count');
      assertError(await send('{}'), 400, 'parameter_missing', 'name');
      assertError(await send('{"name":"waytoolongname"}'), 400, 'invalid_value', 'name');
      assertError(await send('[]'), 400, 'invalid_type');
      const big = JSON.stringify({ name: 'a', pad: 'x'.repeat(1024 * 1024) });
      const e413 = assertError(await send(big), 413, 'payload_too_large');
      assert.equal(e413.type, 'payload_too_large');
    });

    test('an unknown route or method is 404 route_not_found whatever its body, never read', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const deep = '['.repeat(100) + ']'.repeat(100);
      const big = JSON.stringify({ pad: 'x'.repeat(1024 * 1024) });
      for (const [method, url] of [
        ['POST', '/v1/nope'],
        ['PUT', '/v1/lists/lst_x'],
        ['PATCH', '/v1/accounts/acc_x'],
        ['POST', '/nope'],
      ] as const) {
        for (const [payload, type] of [
          ['{"name":', 'application/json'],
          [deep, 'application/json'],
          [big, 'application/json'],
          ['{}', 'application/json; charset=iso-8859-1'],
          ['{"__proto__":{}}', 'application/json'],
        ] as const) {
          const res = await t.app.inject({ method, url, headers: headers(s.secret, { 'content-type': type }), payload });
          assertError(res, 404, 'route_not_found');
        }
      }
    });

    test('an empty body is no body whatever its Content-Type; a body that is there must be JSON', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const del = async (extra: Record<string, string>, payload?: string) => {
        const list = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'account' } });
        return t.app.inject({
          method: 'DELETE',
          url: `/v1/lists/${list.json().id}`,
          headers: headers(s.secret, extra),
          ...(payload === undefined ? {} : { payload }),
        });
      };
      for (const type of ['application/x-www-form-urlencoded', 'text/plain;charset=UTF-8', 'application/octet-stream']) {
        const none = await del({ 'content-type': type });
        assert.equal(none.statusCode, 200, none.body);
        const zero = await del({ 'content-type': type, 'content-length': '0' }, '');
        assert.equal(zero.statusCode, 200, zero.body);
        assertError(await del({ 'content-type': type }, '{}'), 415, 'unsupported_media_type', 'Content-Type');
      }
      // A required body is still required: its absence is the body schema's 400, not a 415, and
      // the message says that no body came, not that nothing "must be of type object".
      for (const type of ['application/x-www-form-urlencoded', 'application/json']) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/lists', headers: headers(s.secret, { 'content-type': type }) });
        assertError(res, 400, 'invalid_type');
        assert.match(res.json().error.message, /^The request has no body: this operation takes a JSON object/);
      }
      // A body of `null` is there: it is the value that is refused.
      const nul = await t.app.inject({ method: 'POST', url: '/v1/lists', headers: headers(s.secret, { 'content-type': 'application/json' }), payload: 'null' });
      assertError(nul, 400, 'invalid_type');
      assert.equal(nul.json().error.message, 'The request body must be of type object.');
    });

    test('query parameters are parsed, range-checked, and refused with invalid_parameter', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      assert.deepEqual((await call(t, s.secret, 'GET', '/v1/test/page')).json(), { query: { limit: 25, offset: 0 } });
      assert.deepEqual((await call(t, s.secret, 'GET', '/v1/test/page?limit=1&offset=7')).json(), { query: { limit: 1, offset: 7 } });
      for (const q of ['limit=0', 'limit=26', 'limit=-1', 'limit=abc', 'limit=1.5']) {
        assertError(await call(t, s.secret, 'GET', `/v1/test/page?${q}`), 400, 'invalid_parameter', 'limit');
      }
      assertError(await call(t, s.secret, 'GET', '/v1/test/page?offset=-1'), 400, 'invalid_parameter', 'offset');
    });

    test('any offset past the end is data [] with the true totalCount, up to 2^53 - 1', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (let i = 0; i < 3; i++) await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: `L${i}`, $objectType: 'account' } });
      await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
      for (const offset of [3, 1_000_000_001, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
        for (const [url, total] of [
          ['/v1/lists', 3],
          ['/v1/accounts', 1],
          ['/v1/accounts?$name[startsWith]=A', 1],
          ['/v1/members', 1],
        ] as const) {
          const res = await call(t, s.secret, 'GET', `${url}${url.includes('?') ? '&' : '?'}offset=${offset}`);
          assert.equal(res.statusCode, 200, `${url} ${offset}: ${res.body}`);
          assert.deepEqual(res.json(), { data: [], object: 'list', totalCount: total }, `${url} ${offset}`);
        }
      }
      assertError(await call(t, s.secret, 'GET', `/v1/lists?offset=${2 ** 53}`), 400, 'invalid_parameter', 'offset');
    });

    test('a query parameter with an empty name is named as sent, never as the query string', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (const url of ['/v1/lists?=1', '/v1/members?limit=2&=x', '/v1/files?=']) {
        const err = assertError(await call(t, s.secret, 'GET', url), 400, 'invalid_parameter', '');
        assert.equal(err.message, 'Invalid query parameter "": it is not a known parameter.', url);
      }
    });

    test('no key secret is stored in the database or written to the logs in clear', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await call(t, s.secret, 'GET', '/v1/auth/validate');
      await call(t, s.secret, 'GET', '/v1/nope');
      await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { authorization: `Bearer ${s.secret}x`, 'service-version': VERSION } });
      const secretPart = s.secret.split('_').slice(2).join('_');
      assert.ok(!t.logs().includes(secretPart), 'secret found in logs');
      assert.ok(t.logs().includes('validateCredential'), 'the request lines were logged');
      const rows = await t.deps.db.kysely.selectFrom('api_keys').selectAll().execute();
      assert.ok(rows.length > 0);
      assert.ok(!JSON.stringify(rows).includes(secretPart), 'secret found in api_keys');
      if (t.tdb.sqliteFile) {
        const { readFileSync, existsSync } = await import('node:fs');
        for (const f of [t.tdb.sqliteFile, `${t.tdb.sqliteFile}-wal`]) {
          if (existsSync(f)) assert.ok(!readFileSync(f).includes(Buffer.from(secretPart)), `secret found in ${f}`);
        }
      }
    });
  },
  { routes: pipelineRoutes },
);
