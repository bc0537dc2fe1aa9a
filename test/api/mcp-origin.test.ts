// The MCP endpoint refuses a browser's request from an origin that is neither the server's own
// (PUBLIC_BASE_URL) nor listed in MCP_ALLOWED_ORIGINS, before its key or body is looked at, as the
// Streamable HTTP transport requires against DNS rebinding (docs/mcp.md §Origins). A request with
// no Origin header (a client that is no browser) is served as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { mcpHeaders } from '../helpers/mcp.ts';

const ACCEPT = 'application/json, text/event-stream';
const createList = (name: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'write_to_rolodex', arguments: { path: '/v1/lists', body: { fields: { $name: name, $objectType: 'contact' } } } },
});

async function post(t: TestApp, secret: string | undefined, origin: string | undefined, body: unknown = { jsonrpc: '2.0', id: 1, method: 'ping' }) {
  return t.app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders(secret, { origin }), payload: JSON.stringify(body) });
}

async function listNames(t: TestApp, workspaceId: string): Promise<string[]> {
  const rows = await t.deps.db.kysely.selectFrom('lists').select('name').where('workspace_id', '=', workspaceId).execute();
  return rows.map((r) => r.name);
}

const refusal = (origin: string) => ({ jsonrpc: '2.0', error: { code: -32000, message: `Invalid Origin header: ${origin}` }, id: null });

eachDialect('mcp origins, by default', (ctx) => {
  test('a foreign Origin is refused with 403 on every method, before the key, and its tool call does nothing', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const evil = 'http://evil.test';
    const res = await post(t, s.secret, evil, createList('rebound'));
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), refusal(evil));
    assert.deepEqual(await listNames(t, s.workspaceId), []);
    // No key, a bad key: the origin is refused first, so nothing is said of the key.
    assert.equal((await post(t, undefined, evil)).statusCode, 403);
    assert.equal((await post(t, 'rdx_not_a_key', evil)).statusCode, 403);
    for (const method of ['GET', 'DELETE'] as const) {
      const other = await t.app.inject({ method, url: '/mcp', headers: { authorization: `Bearer ${s.secret}`, accept: ACCEPT, origin: evil } });
      assert.equal(other.statusCode, 403, method);
    }
    // Opaque and malformed origins, and the server's host under another scheme or port.
    for (const origin of ['null', 'not an origin', 'https://rolodex.test', 'http://rolodex.test:8080', 'http://rolodex.test/path']) {
      const r = await post(t, s.secret, origin);
      assert.equal(r.statusCode, 403, origin);
      assert.deepEqual(r.json(), refusal(origin));
    }
  });

  test("no Origin, or the server's own (PUBLIC_BASE_URL), is served", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    assert.equal((await post(t, s.secret, undefined)).statusCode, 200);
    assert.equal((await post(t, s.secret, 'http://rolodex.test')).statusCode, 200);
    // The same origin spelled otherwise (case, default port) is the same origin.
    assert.equal((await post(t, s.secret, 'HTTP://Rolodex.TEST:80')).statusCode, 200);
    const res = await post(t, s.secret, 'http://rolodex.test', createList('same origin'));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await listNames(t, s.workspaceId), ['same origin']);
    // Without an Origin the key is checked as ever.
    const anonymous = await post(t, undefined, undefined);
    assert.equal(anonymous.statusCode, 401);
    assert.match(String(anonymous.headers['www-authenticate']), /^Bearer realm="rolodex"/);
  });
});

eachDialect(
  'mcp origins, with MCP_ALLOWED_ORIGINS',
  (ctx) => {
    test('a listed origin is served besides the own; any other is refused', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      assert.equal((await post(t, s.secret, 'https://app.example.com')).statusCode, 200);
      assert.equal((await post(t, s.secret, 'http://localhost:6274')).statusCode, 200);
      assert.equal((await post(t, s.secret, 'http://rolodex.test')).statusCode, 200);
      for (const origin of ['http://app.example.com', 'https://app.example.com:8443', 'https://example.com', 'http://localhost:6275']) {
        assert.equal((await post(t, s.secret, origin)).statusCode, 403, origin);
      }
    });
  },
  { env: { MCP_ALLOWED_ORIGINS: ' https://App.Example.com:443/ , http://localhost:6274' } },
);

eachDialect(
  'mcp origins, with MCP_ALLOWED_ORIGINS=*',
  (ctx) => {
    test('any origin is served', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (const origin of ['http://evil.test', 'null']) assert.equal((await post(t, s.secret, origin)).statusCode, 200, origin);
    });
  },
  { env: { MCP_ALLOWED_ORIGINS: '*' } },
);

test('MCP_ALLOWED_ORIGINS takes * or origins only, and always keeps PUBLIC_BASE_URL', () => {
  const load = (env: Record<string, string>) => loadConfig({ DATA_DIR: '/tmp/rolodex-origin-test', SIGNING_SECRET: 'x'.repeat(32), ...env });
  assert.deepEqual(load({}).mcpOrigins, ['http://127.0.0.1:3000']);
  assert.deepEqual(load({ PUBLIC_BASE_URL: 'https://crm.example.com/rolodex' }).mcpOrigins, ['https://crm.example.com']);
  assert.deepEqual(load({ PUBLIC_BASE_URL: 'https://crm.example.com', MCP_ALLOWED_ORIGINS: 'https://crm.example.com,https://b.test' }).mcpOrigins, [
    'https://crm.example.com',
    'https://b.test',
  ]);
  assert.equal(load({ MCP_ALLOWED_ORIGINS: ' * ' }).mcpOrigins, 'any');
  for (const bad of [
    'app.example.com',
    'https://a.test/path',
    'https://a.test?x=1',
    'ftp://a.test',
    'https://a.test,,https://b.test',
    'null',
    '*,https://a.test',
  ]) {
    assert.throws(
      () => load({ MCP_ALLOWED_ORIGINS: bad }),
      (err: unknown) => err instanceof ConfigError && err.param === 'MCP_ALLOWED_ORIGINS',
      bad,
    );
  }
});
