// The methods of `/mcp` (docs/mcp.md §Methods): POST is served; any other method but OPTIONS
// answers 405 with `Allow` and a JSON-RPC error, as the SDK's Streamable HTTP transport answers a
// method it does not serve, once the origin and the key are checked and before the body is read;
// OPTIONS (a browser's CORS preflight carries no key) answers 204 with `Allow`, after the origin.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { MCP_BODY_LIMIT } from '../../src/mcp/routes.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';

const NOT_ALLOWED = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless and serves POST only.' }, id: null };

eachDialect('mcp methods', (ctx) => {
  test('a method /mcp does not serve answers 405 with Allow and a JSON-RPC error, after the key, before the body', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const auth = { authorization: `Bearer ${s.secret}` };
    for (const method of ['PUT', 'PATCH', 'GET', 'DELETE', 'HEAD'] as const) {
      const res = await t.app.inject({ method, url: '/mcp', headers: auth });
      assert.equal(res.statusCode, 405, method);
      assert.equal(res.headers.allow, 'OPTIONS, POST', method);
      if (method !== 'HEAD') assert.deepEqual(res.json(), NOT_ALLOWED, method);
      // Without a key, the key is refused first, as for a POST.
      const anonymous = await t.app.inject({ method, url: '/mcp' });
      assert.equal(anonymous.statusCode, 401, method);
      // A foreign origin is refused before the key.
      assert.equal((await t.app.inject({ method, url: '/mcp', headers: { ...auth, origin: 'http://evil.test' } })).statusCode, 403, method);
    }
    // The body is never read: a PUT over the POST's limit is still 405, not 413.
    const big = await t.app.inject({
      method: 'PUT',
      url: '/mcp',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: 'x'.repeat(MCP_BODY_LIMIT + 1),
    });
    assert.equal(big.statusCode, 405);
    assert.deepEqual(big.json(), NOT_ALLOWED);

    // The SDK's transport answers such a method alike: 405, Allow, a JSON-RPC error -32000.
    const sdk = await new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }).handleRequest(
      new Request('http://mcp.test/mcp', { method: 'PUT' }),
    );
    assert.equal(sdk.status, 405);
    assert.ok(sdk.headers.get('allow'));
    const sdkBody = (await sdk.json()) as typeof NOT_ALLOWED;
    assert.deepEqual({ ...sdkBody, error: { ...sdkBody.error, message: '' } }, { ...NOT_ALLOWED, error: { ...NOT_ALLOWED.error, message: '' } });
  });

  test("OPTIONS answers 204 with Allow without a key, a preflight from the server's own origin too, from a foreign one 403", async () => {
    const t = ctx();
    const bare = await t.app.inject({ method: 'OPTIONS', url: '/mcp' });
    assert.equal(bare.statusCode, 204);
    assert.equal(bare.headers.allow, 'OPTIONS, POST');
    assert.equal(bare.body, '');
    const preflight = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' };
    const own = await t.app.inject({ method: 'OPTIONS', url: '/mcp', headers: { ...preflight, origin: 'http://rolodex.test' } });
    assert.equal(own.statusCode, 204);
    assert.equal(own.headers.allow, 'OPTIONS, POST');
    // No CORS headers: the server sends none (docs/mcp.md §Origins).
    assert.deepEqual(
      Object.keys(own.headers).filter((h) => h.startsWith('access-control-')),
      [],
    );
    const evil = 'http://evil.test';
    const foreign = await t.app.inject({ method: 'OPTIONS', url: '/mcp', headers: { ...preflight, origin: evil } });
    assert.equal(foreign.statusCode, 403);
    assert.deepEqual(foreign.json(), { jsonrpc: '2.0', error: { code: -32000, message: `Invalid Origin header: ${evil}` }, id: null });
  });
});
