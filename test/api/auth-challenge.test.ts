// The WWW-Authenticate challenges of docs/design.md §Requests, as RFC 6750 §3 has them, on both
// databases: no credentials (no header, another scheme) get a challenge without an error code; a
// Bearer credential that is not a token gets `invalid_request`; a token that is unknown, revoked
// or expired gets `invalid_token`; a key without a scope the route needs gets 403
// `insufficient_scope` naming the route's scopes. Other refusals carry no challenge.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKey, revokeKey } from '../../src/auth/service.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { call, eachDialect, keyFor, seedWorkspace, VERSION, type TestApp } from '../helpers/app.ts';

const REALM = 'Bearer realm="rolodex"';

/** A request to an API route with this Authorization header (none when undefined). */
function withAuthorization(t: TestApp, authorization: string | undefined, url = '/v1/auth/validate') {
  return t.app.inject({ method: 'GET', url, headers: { 'service-version': VERSION, ...(authorization === undefined ? {} : { authorization }) } });
}

/** The challenge's parameters, checked against the RFC 7235 syntax of a Bearer challenge. */
function parseChallenge(header: unknown): Record<string, string> {
  assert.equal(typeof header, 'string', 'a WWW-Authenticate header');
  const m = /^Bearer (.*)$/.exec(header as string);
  assert.ok(m, `${String(header)} is a Bearer challenge`);
  const params: Record<string, string> = {};
  // RFC 6750 §3: every attribute is a quoted string without quotes or backslashes inside.
  const re = /(?:^|, )([a-z_]+)="([\x20\x21\x23-\x5b\x5d-\x7e]*)"/gy;
  let end = 0;
  for (let p = re.exec(m[1]!); p; p = re.exec(m[1]!)) {
    assert.equal(params[p[1]!], undefined, `${p[1]} appears once`);
    params[p[1]!] = p[2]!;
    end = re.lastIndex;
  }
  assert.equal(end, m[1]!.length, `${String(header)} is well-formed`);
  return params;
}

function assertRefusal(res: { statusCode: number; json(): any }, status: number, code: string): void {
  assert.equal(res.statusCode, status, JSON.stringify(res.json()));
  assert.equal(res.json().error.code, code);
}

eachDialect('WWW-Authenticate', (ctx) => {
  test('no credentials, or credentials of another scheme: a challenge without an error code', async () => {
    const t = ctx();
    for (const authorization of [undefined, '', 'Basic dXNlcjpwYXNz', 'Digest username="x"', 'Bearerrdx_abc']) {
      const res = await withAuthorization(t, authorization);
      assertRefusal(res, 401, 'missing_api_key');
      assert.equal(res.headers['www-authenticate'], REALM, String(authorization));
    }
  });

  test('the scheme in any case, and any run of spaces or tabs between it and the key, open the request', async () => {
    const t = ctx();
    const { secret } = await seedWorkspace(t);
    for (const authorization of [
      `bearer ${secret}`,
      `BEARER ${secret}`,
      `Bearer   ${secret}`,
      `Bearer\t${secret}`,
      `Bearer \t ${secret}`,
      `bearer\t\t${secret}`,
    ]) {
      const res = await withAuthorization(t, authorization);
      assert.equal(res.statusCode, 200, `${JSON.stringify(authorization.replace(secret, 'KEY'))}: ${res.body}`);
      assert.equal(res.headers['www-authenticate'], undefined);
    }
    // A tab does not make another scheme of Bearer: without a token it is a malformed Bearer credential.
    const res = await withAuthorization(t, 'Bearer\t');
    assertRefusal(res, 401, 'invalid_api_key');
    assert.equal(parseChallenge(res.headers['www-authenticate']).error, 'invalid_request');
  });

  test('a Bearer credential that is not a token: invalid_request', async () => {
    const t = ctx();
    for (const authorization of ['Bearer', 'Bearer ', 'Bearer rdx_a rdx_b', 'Bearer rdx_"quoted"', 'Bearer rdx_é']) {
      const res = await withAuthorization(t, authorization);
      assertRefusal(res, 401, 'invalid_api_key');
      const c = parseChallenge(res.headers['www-authenticate']);
      assert.equal(c.realm, 'rolodex');
      assert.equal(c.error, 'invalid_request', authorization);
      assert.equal(c.scope, undefined);
    }
  });

  test('a token that is unknown, revoked or expired: invalid_token, the reason in error_description', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const revoked = await createKey(operatorCtx(t.deps.db.kysely, s.workspaceId), { userId: null, scopes: null, expiresInMs: null });
    await revokeKey(systemCtx(t.deps.db.kysely), { id: revoked.id });
    const expired = await createKey(operatorCtx(t.deps.db.kysely, s.workspaceId), { userId: null, scopes: null, expiresInMs: 20 });
    await new Promise((r) => setTimeout(r, 40));
    const unknown = s.secret.slice(0, -1) + (s.secret.endsWith('A') ? 'B' : 'A');
    for (const [token, reason] of [
      ['garbage', /not valid/],
      ['sk_lf_abc==', /not valid/],
      [unknown, /not valid/],
      [revoked.secret, /revoked/],
      [expired.secret, /expired/],
    ] as const) {
      const res = await withAuthorization(t, `Bearer ${token}`);
      assertRefusal(res, 401, 'invalid_api_key');
      const c = parseChallenge(res.headers['www-authenticate']);
      assert.deepEqual(Object.keys(c), ['realm', 'error', 'error_description']);
      assert.equal(c.error, 'invalid_token');
      assert.match(c.error_description!, reason);
      assert.equal(c.error_description, res.json().error.message);
    }
    // The scheme's name is case-insensitive (RFC 7235 §2.1): a valid key passes under any case.
    assert.equal((await withAuthorization(t, `bEARER ${s.secret}`)).statusCode, 200);
  });

  test('a key without a scope the route needs: 403 insufficient_scope naming every scope of the route', async () => {
    const t = ctx();
    const s = await seedWorkspace(t, { scopes: ['lists:read'] });
    const create = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'A', $objectType: 'account' } });
    assertRefusal(create, 403, 'insufficient_scope');
    const one = parseChallenge(create.headers['www-authenticate']);
    assert.deepEqual(one, { realm: 'rolodex', error: 'insufficient_scope', error_description: create.json().error.message, scope: 'lists:create' });
    const members = await call(t, s.secret, 'GET', '/v1/lists/lst_x/accounts');
    assertRefusal(members, 403, 'insufficient_scope');
    assert.equal(parseChallenge(members.headers['www-authenticate']).scope, 'lists:read accounts:read');
  });

  test('a route that learns its scope from the resource (a merge, an enrichment run) challenges alike', async () => {
    const t = ctx();
    const s = await seedWorkspace(t, { scopes: ['contacts:read'] });
    for (const url of ['/v1/merges/mrg_x', `/v1/enrichmentRun/enr_${'0'.repeat(26)}`]) {
      const res = await call(t, s.secret, 'GET', url);
      assertRefusal(res, 403, 'insufficient_scope');
      const c = parseChallenge(res.headers['www-authenticate']);
      assert.deepEqual([c.error, c.error_description], ['insufficient_scope', res.json().error.message], url);
      assert.ok(c.scope?.split(' ').includes('accounts:read'), `${url}: the scope names what the key lacks`);
    }
  });

  test('refusals that are not about the key carry no challenge', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const workspaceKey = await keyFor(t, s.workspaceId, null);
    const knowledge = await call(t, workspaceKey, 'POST', '/v1/files', { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: 1, purpose: 'knowledge_user' });
    assertRefusal(knowledge, 403, 'user_required');
    assert.equal(knowledge.headers['www-authenticate'], undefined);
    const version = await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { authorization: `Bearer ${s.secret}` } });
    assertRefusal(version, 400, 'version_header');
    assert.equal(version.headers['www-authenticate'], undefined);
  });

  test('/mcp challenges as the API does', async () => {
    const t = ctx();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const post = (authorization?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
        payload: body,
      });
    const none = await post();
    assertRefusal(none, 401, 'missing_api_key');
    assert.equal(none.headers['www-authenticate'], REALM);
    const bad = await post('Bearer garbage');
    assertRefusal(bad, 401, 'invalid_api_key');
    assert.equal(parseChallenge(bad.headers['www-authenticate']).error, 'invalid_token');
  });
});
