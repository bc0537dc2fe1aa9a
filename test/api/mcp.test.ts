// The MCP endpoint (docs/mcp.md) through the official SDK's client against a listening app, on both
// databases: the five tools, a tool call that is the REST call (scopes, idempotency, errors), the
// paths a tool cannot reach, and authentication by the API keys.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createRateLimiter } from '../../src/rate-limit/factory.ts';
import { call, eachDialect, headers, keyFor, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { postMcp, type ToolResult } from '../helpers/mcp.ts';

async function connect(base: string, secret: string): Promise<Client> {
  const client = new Client({ name: 'rolodex-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } });
  await client.connect(transport);
  return client;
}

async function tool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; json: any; text: string }> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  const text = r.content[0]?.text ?? '';
  return { isError: r.isError === true, json: JSON.parse(text), text };
}

eachDialect('mcp', (ctx) => {
  let base = '';
  let s: Seeded;
  before(async () => {
    const t = ctx();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    s = await seedWorkspace(t);
  });
  /** POSTs `body` to /mcp as a client would, with the key; a header of `extra` given as undefined is left out. */
  const postRaw = (body: string, extra: Record<string, string | undefined> = {}) => postMcp(ctx(), s.secret, body, { headers: extra });

  test('lists the five tools; get_current_user names the member and never the key', async () => {
    const client = await connect(base, s.secret);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), ['get_api_details', 'get_current_user', 'read_from_rolodex', 'search_api_docs', 'write_to_rolodex']);
      // The tool list never changes, and there is no stream to say so on: the server claims no notice of it.
      assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: false });
      const me = await tool(client, 'get_current_user');
      assert.equal(me.isError, false);
      assert.equal(me.json.subjectType, 'user');
      assert.equal(me.json.id, s.userId);
      assert.equal(me.json.workspace.id, s.workspaceId);
      assert.equal(me.json.fullAccess, true);
      assert.ok(!me.text.includes(s.secret));
    } finally {
      await client.close();
    }
  });

  test('search_api_docs finds operations by words; get_api_details shows one with its scopes and schemas', async () => {
    const client = await connect(base, s.secret);
    try {
      // The catalogue an agent reads first takes no arguments: every /v1 operation the app serves.
      const document = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const served = Object.entries(document.paths)
        .filter(([path]) => path.startsWith('/v1/'))
        .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
        .sort();
      for (const args of [{}, { query: '' }]) {
        const all = await tool(client, 'search_api_docs', args);
        assert.equal(all.isError, false, JSON.stringify(args));
        assert.equal(all.json.total, served.length);
        assert.deepEqual(all.json.operations.map((o: any) => `${o.method} ${o.path}`).sort(), served, JSON.stringify(args));
      }
      assert.equal((await tool(client, 'search_api_docs', { limit: 3 })).json.operations.length, 3);
      const found = await tool(client, 'search_api_docs', { query: 'create contact' });
      assert.ok(found.json.operations.some((o: any) => o.method === 'POST' && o.path === '/v1/contacts' && o.operationId === 'createContact'));
      assert.ok(found.json.operations.every((o: any) => o.path.startsWith('/v1')));
      const byId = await tool(client, 'get_api_details', { operationId: 'createContact' });
      assert.equal(byId.json.path, '/v1/contacts');
      assert.deepEqual(byId.json.scopes, ['contacts:create']);
      assert.equal(byId.json.requestBody.type, 'object');
      assert.equal(byId.json.requestBodyRequired, true);
      assert.ok(byId.json.responses['200'].schema);
      // The tools send the headers: none is a parameter an agent could give.
      assert.deepEqual(
        byId.json.parameters.filter((p: { in: string }) => p.in === 'header'),
        [],
      );
      // A run takes its body as optional, and either read scope reads it.
      const run = await tool(client, 'get_api_details', { operationId: 'enrichAccount' });
      assert.equal(run.json.requestBodyRequired, false);
      const read = await tool(client, 'get_api_details', { operationId: 'getEnrichmentRun' });
      assert.deepEqual([read.json.scopes, read.json.anyOfScopes], [[], ['accounts:read', 'contacts:read']]);
      const empty = await tool(client, 'get_api_details', { operationId: '' });
      assert.equal(empty.isError, true);
      assert.equal(empty.json.error.param, 'operationId');
      assert.notEqual(empty.json.error.code, 'resource_not_found');
      const byPath = await tool(client, 'get_api_details', { method: 'GET', path: '/v1/lists/{id}' });
      assert.equal(byPath.json.operationId, 'getList');
      // A path that one operation serves needs no method.
      const sole = await tool(client, 'get_api_details', { path: '/v1/accounts/merge' });
      assert.equal(sole.isError, false, sole.text);
      assert.deepEqual([sole.json.method, sole.json.operationId], ['POST', 'mergeAccounts']);
      const none = await tool(client, 'get_api_details', { operationId: 'nothingLikeThis' });
      assert.equal(none.isError, true);
      assert.equal(none.json.error.code, 'resource_not_found');
    } finally {
      await client.close();
    }
  });

  test('read and write with a scoped key are the REST calls: same answers, idempotency, scope refusal', async () => {
    const t = ctx();
    const key = await keyFor(t, s.workspaceId, s.userId, ['accounts:create', 'accounts:read']);
    const client = await connect(base, key);
    try {
      const body = { fields: { $name: 'Acme MCP' } };
      const created = await tool(client, 'write_to_rolodex', { path: '/v1/accounts', body, idempotencyKey: 'mcp-create-1' });
      assert.equal(created.isError, false);
      assert.match(created.json.id, /^acc_/);
      const again = await tool(client, 'write_to_rolodex', { path: '/v1/accounts', body, idempotencyKey: 'mcp-create-1' });
      assert.equal(again.json.id, created.json.id, 'the idempotency key replays the first answer');
      const read = await tool(client, 'read_from_rolodex', { path: `/v1/accounts/${created.json.id}` });
      assert.deepEqual(read.json, (await call(t, key, 'GET', `/v1/accounts/${created.json.id}`)).json());
      const listed = await tool(client, 'read_from_rolodex', { path: '/v1/accounts?limit=1', query: { offset: 0 } });
      assert.equal(listed.json.data.length, 1);
      const refused = await tool(client, 'read_from_rolodex', { path: '/v1/contacts' });
      assert.equal(refused.isError, true);
      assert.equal(refused.json.error.code, 'insufficient_scope');
      const invalid = await tool(client, 'write_to_rolodex', { path: '/v1/accounts', body: { fields: { $name: 'x' }, extra: 1 } });
      assert.equal(invalid.isError, true);
      assert.equal(invalid.json.error.code, 'unknown_field');
      const missing = await tool(client, 'read_from_rolodex', { path: '/v1/accounts/acc_01aaaaaaaaaaaaaaaaaaaaaaaa' });
      assert.equal(missing.json.error.code, 'resource_not_found');
    } finally {
      await client.close();
    }
  });

  test('two keys of different workspaces and scopes, their calls interleaved at once, each get their own answers', async () => {
    // The endpoint serves requests on servers it reuses (docs/mcp.md §Sessions): a tool call must
    // act as its own request's key and nobody else's, however the calls interleave.
    const t = ctx();
    const other = await seedWorkspace(t);
    const keyA = await keyFor(t, s.workspaceId, s.userId, ['accounts:read']);
    const keyB = await keyFor(t, other.workspaceId, other.userId, ['accounts:read', 'contacts:read']);
    const accA = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Only A sees me' } })).json().id as string;
    const accB = (await call(t, other.secret, 'POST', '/v1/accounts', { fields: { $name: 'Only B sees me' } })).json().id as string;
    const [a, b] = await Promise.all([connect(base, keyA), connect(base, keyB)]);
    try {
      type Expect = (r: Awaited<ReturnType<typeof tool>>) => void;
      const asks: [Client, string, Record<string, unknown>, Expect][] = [
        [a, 'read_from_rolodex', { path: `/v1/accounts/${accA}` }, (r) => assert.equal(r.json.fields.$name.value, 'Only A sees me')],
        [b, 'read_from_rolodex', { path: `/v1/accounts/${accB}` }, (r) => assert.equal(r.json.fields.$name.value, 'Only B sees me')],
        [a, 'read_from_rolodex', { path: `/v1/accounts/${accB}` }, (r) => assert.equal(r.json.error.code, 'resource_not_found')],
        [b, 'read_from_rolodex', { path: `/v1/accounts/${accA}` }, (r) => assert.equal(r.json.error.code, 'resource_not_found')],
        [a, 'read_from_rolodex', { path: '/v1/contacts' }, (r) => assert.equal(r.json.error.code, 'insufficient_scope')],
        [b, 'read_from_rolodex', { path: '/v1/contacts' }, (r) => assert.equal(r.isError, false)],
        [a, 'get_current_user', {}, (r) => assert.deepEqual([r.json.workspace.id, r.json.scopes], [s.workspaceId, ['accounts:read']])],
        [b, 'get_current_user', {}, (r) => assert.deepEqual([r.json.workspace.id, r.json.scopes], [other.workspaceId, ['accounts:read', 'contacts:read']])],
      ];
      for (let round = 0; round < 3; round++) {
        // Every ask eight times over, all sent at once, in an order that mixes the two keys.
        const all = Array.from({ length: 8 }, (_, i) => asks.map((_, j) => asks[(j * 3 + i) % asks.length] as (typeof asks)[number])).flat();
        const results = await Promise.all(all.map(([client, name, args]) => tool(client, name, args)));
        results.forEach((r, i) => (all[i] as (typeof asks)[number])[3](r));
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('no path outside /v1 is reachable: other prefixes, absolute URLs, dot segments, encodings', async () => {
    const client = await connect(base, s.secret);
    try {
      const paths = [
        '/mcp',
        '/openapi.json',
        '/healthz',
        '/metrics',
        'v1/accounts',
        'http://127.0.0.1/v1/accounts',
        '//evil.test/v1/accounts',
        '/v1/../metrics',
        '/v1/%2e%2e/metrics',
        '/v1/%2E%2E/healthz',
        '/v1/.%2e/healthz',
        '/v1/./accounts',
        '/v1/accounts/..%2fmetrics',
        '/v1\\..\\metrics',
        '/v1/accounts#frag',
        '/v1x/accounts',
        '/v1//accounts',
        '/v1/accounts/%zz',
        '/v1/accounts/{id}',
        '/v1/accounts/ü',
        '/v1/accounts/a|b',
        '/uploads/anything',
      ];
      for (const path of paths) {
        const r = await tool(client, 'read_from_rolodex', { path });
        assert.equal(r.isError, true, path);
        assert.equal(r.json.error.code, 'invalid_parameter', path);
        assert.equal(r.json.error.param, 'path', path);
        const w = await tool(client, 'write_to_rolodex', { method: 'DELETE', path });
        assert.equal(w.json.error.code, 'invalid_parameter', path);
      }
    } finally {
      await client.close();
    }
  });

  test('a body the REST call refuses (a NUL, too deep, a __proto__ key) is a tool error with the REST error; REST depths pass the envelope', async () => {
    // docs/mcp.md §Tools: the tool call is the REST call; the envelope's own checks never answer
    // for the body it carries.
    const t = ctx();
    const client = await connect(base, s.secret);
    const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
    const rest = async (text: string) =>
      (await t.app.inject({ method: 'POST', url: '/v1/accounts', headers: headers(s.secret, { 'content-type': 'application/json' }), payload: text })).json();
    /** The tool's answer to a write of `bodyText`, sent as raw JSON-RPC (the SDK's client cannot serialize the deepest). */
    const raw = async (bodyText: string) => {
      const res = await postRaw(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_to_rolodex","arguments":{"path":"/v1/accounts","body":${bodyText}}}}`,
      );
      const answer = (await res.json()) as { result?: ToolResult };
      assert.equal(res.status, 200, JSON.stringify(answer));
      return answer.result;
    };
    try {
      const bodies: [string, string][] = [
        ['a NUL', '{"fields":{"$name":"a\\u0000b"}}'],
        ['64 levels, as deep as REST takes', `{"fields":{"$name":"Deep"},"extra":${nested(63)}}`],
        ['65 levels', `{"fields":{"$name":"Deep"},"extra":${nested(64)}}`],
        ['100000 levels', `{"fields":{"$name":"Deep"},"extra":${nested(100_000)}}`],
        ['a __proto__ key', '{"fields":{"$name":"Proto"},"__proto__":{"a":1}}'],
      ];
      for (const [name, text] of bodies) {
        const result = await raw(text);
        const expected = await rest(text);
        assert.equal(result?.isError, true, name);
        assert.deepEqual({ ...JSON.parse(result.content[0]!.text).error, requestId: '' }, { ...expected.error, requestId: '' }, name);
      }
      const nul = await tool(client, 'write_to_rolodex', { path: '/v1/accounts', body: { fields: { $name: 'a\u0000b' } } });
      assert.equal(nul.isError, true);
      assert.deepEqual([nul.json.error.code, nul.json.error.param], ['invalid_value', 'fields.$name']);
    } finally {
      await client.close();
    }
  });

  test("a query's every key reaches the REST call, __proto__ too; a query of other values is refused", async () => {
    // docs/mcp.md §Tools: `query` is sent as the REST call's query string, key for key; the API
    // refuses `?__proto__=x` as an unknown filter, so the tool does too (never lists unfiltered).
    const t = ctx();
    const call1 = async (query: string) => {
      const res = await postRaw(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_from_rolodex","arguments":{"path":"/v1/accounts","query":${query}}}}`,
      );
      return ((await res.json()) as { result: ToolResult }).result;
    };
    const pick = (e: { code: string; param: string }) => [e.code, e.param];
    const rest = (await t.app.inject({ method: 'GET', url: '/v1/accounts?__proto__=x', headers: headers(s.secret) })).json();
    assert.equal(rest.error.code, 'invalid_parameter');
    for (const query of ['{"__proto__":"x"}', '{"__proto__":["x"]}', '{"limit":1,"__proto__":{"a":1}}']) {
      const result = await call1(query);
      assert.equal(result.isError, true, `${query}: ${result.content[0]!.text.slice(0, 200)}`);
      if (query.includes('{"a"')) assert.deepEqual(pick(JSON.parse(result.content[0]!.text).error), ['invalid_type', 'query.__proto__']);
      else assert.deepEqual({ ...JSON.parse(result.content[0]!.text).error, requestId: '' }, { ...rest.error, requestId: '' }, query);
    }
    const fine = await call1('{"limit":1,"offset":[0],"$name[neq]":null}');
    assert.equal(fine.isError, undefined, fine.content[0]!.text);
    assert.ok(Array.isArray(JSON.parse(fine.content[0]!.text).data));
  });

  test('bad POSTs are answered as the SDK transport answers them: invalid JSON 400 -32700, not JSON 415 -32000', async () => {
    const post = async (body: string, contentType?: string) => {
      const res = await postRaw(body, { 'content-type': contentType });
      return { status: res.status, body: (await res.json()) as any };
    };
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const unsupported = {
      status: 415,
      body: { jsonrpc: '2.0', error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' }, id: null },
    };
    assert.deepEqual(await post('{"jsonrpc": "2.0",', 'application/json'), {
      status: 400,
      body: { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null },
    });
    assert.deepEqual(await post(list, 'text/plain'), unsupported);
    assert.deepEqual(await post(list, 'text/plain; a=application/json'), unsupported);
    assert.deepEqual(await post(list), unsupported);
    const ok = await post(list, 'Application/JSON; charset=utf-8');
    assert.equal(ok.status, 200);
    assert.equal(ok.body.result.tools.length, 5);
  });

  test('a request cancelled in its own POST is not waited for; a request named notifications/cancelled is an unknown method', async () => {
    const post = async (messages: unknown) => {
      // A POST left unanswered fails here rather than holding the test.
      const res = await postMcp(ctx(), s.secret, messages, { signal: AbortSignal.timeout(5000) });
      const text = await res.text();
      return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
    };
    const cancel = (requestId: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
    const me = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_current_user', arguments: {} } };
    assert.deepEqual(await post([me, cancel(1)]), { status: 202, body: undefined });
    assert.deepEqual(await post([me, { jsonrpc: '2.0', id: 2, method: 'ping' }, cancel(1)]), {
      status: 200,
      body: { jsonrpc: '2.0', id: 2, result: {} },
    });
    assert.deepEqual(await post({ jsonrpc: '2.0', id: 3, method: 'notifications/cancelled', params: { requestId: 99 } }), {
      status: 200,
      body: { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'Method not found' } },
    });
  });

  test("read_from_rolodex's description gives an example query that works", async () => {
    const t = ctx();
    await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme Example' } });
    const client = await connect(base, s.secret);
    try {
      const read = (await client.listTools()).tools.find((x) => x.name === 'read_from_rolodex');
      const m = /path "([^"]+)" with query (\{.*?\})/.exec(read?.description ?? '');
      assert.ok(m, read?.description);
      const r = await tool(client, 'read_from_rolodex', { path: m[1], query: JSON.parse(m[2]!) });
      assert.equal(r.isError, false, r.text);
      assert.ok(r.json.data.some((a: any) => a.fields.$name.value === 'Acme Example'));
    } finally {
      await client.close();
    }
  });

  test('no key or a bad key: 401 with WWW-Authenticate; GET and DELETE answer 405; the SDK client is refused', async () => {
    for (const authorization of [undefined, 'Bearer nope']) {
      const res = await postRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { authorization });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /);
      assert.match(((await res.json()) as { error: { code: string } }).error.code, /^(missing|invalid)_api_key$/);
    }
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { authorization: `Bearer ${s.secret}`, accept: 'text/event-stream' } });
      assert.equal(res.status, 405);
      await res.body?.cancel();
    }
    await assert.rejects(connect(base, 'sk_wrong'));
  });
  test('a body up to 4 MiB is read as the SDK reads it; a longer one answers 413 in JSON-RPC, after the key is checked', async () => {
    const ping = (pad: number) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(pad) } });
    const big = await postRaw(ping(2 << 20));
    assert.equal(big.status, 200);
    assert.deepEqual(await big.json(), { jsonrpc: '2.0', id: 1, result: {} });
    const over = await postRaw(ping(4 << 20));
    assert.equal(over.status, 413);
    assert.deepEqual(await over.json(), {
      jsonrpc: '2.0',
      error: { code: -32000, message: `Payload Too Large: Request body must not exceed ${4 << 20} bytes` },
      id: null,
    });
    const stranger = await postRaw(ping(4 << 20), { authorization: undefined });
    assert.equal(stranger.status, 401);
    assert.equal(((await stranger.json()) as { error: { code: string } }).error.code, 'missing_api_key');
  });
});

eachDialect(
  'mcp off',
  (ctx) => {
    test('MCP=off serves no /mcp route', async () => {
      const t: TestApp = ctx();
      const s2 = await seedWorkspace(t);
      const res = await t.app.inject({ method: 'POST', url: '/mcp', headers: { authorization: `Bearer ${s2.secret}` } });
      assert.equal(res.statusCode, 404);
    });
  },
  { env: { MCP: 'off' } },
);

// The limiter's clock stands still, so no bucket refills between two calls of the test.
const frozen = Date.now();
eachDialect(
  'mcp rate limits',
  (ctx) => {
    test("a tool call spends the workspace's bucket of its category, as the REST call does, and is refused with its error", async () => {
      const t: TestApp = ctx();
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const s2 = await seedWorkspace(t);
      const client = await connect(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, s2.secret);
      try {
        for (let i = 0; i < 3; i++) assert.equal((await tool(client, 'read_from_rolodex', { path: '/v1/auth/validate' })).isError, false);
        const refused = await tool(client, 'read_from_rolodex', { path: '/v1/auth/validate' });
        assert.equal(refused.isError, true);
        assert.equal(refused.json.error.code, 'rate_limited');
        assert.equal(refused.json.error.type, 'too_many_requests');
        assert.equal((await call(t, s2.secret, 'GET', '/v1/auth/validate')).statusCode, 429, 'the REST read finds the bucket the tools emptied');
        const write = await tool(client, 'write_to_rolodex', { path: '/v1/accounts', body: { fields: { $name: 'Another bucket' } } });
        assert.equal(write.isError, false, 'writes have a bucket of their own');
      } finally {
        await client.close();
      }
    });
  },
  {
    env: { RATE_LIMIT_READ: '3' },
    deps: async (deps, config) => {
      deps.rateLimiter = await createRateLimiter(config, deps.logger, { metrics: deps.metrics, clock: () => frozen });
    },
  },
);
