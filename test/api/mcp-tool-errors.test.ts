// The MCP tools' own refusals (docs/mcp.md §Tools), on both databases: arguments a tool's schema
// refuses are a tool error whose text is the API's JSON error object, with the code the same
// failure of a REST body gets and the argument in `param`; a tools/call without params or naming
// no tool is JSON-RPC -32602, as are an initialize or a tools/list with params the protocol does not take;
// the three tools that are no API call spend the workspace's Read bucket, one
// token a call as a REST read, and an empty bucket answers them with the REST 429.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { createRateLimiter } from '../../src/rate-limit/factory.ts';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rpc, toolCall, type ToolResult } from '../helpers/mcp.ts';

type Answer = { jsonrpc: '2.0'; id: number; result?: ToolResult; error?: { code: number; message: string } };

/** POSTs JSON-RPC `messages` to /mcp with the key, as a client would. */
const post = (t: TestApp, secret: string, messages: unknown) => rpc<Answer | Answer[]>(t, secret, messages);

/** The tool error of one call, as its JSON error object. */
async function toolError(t: TestApp, secret: string, name: string, args?: unknown) {
  const answer = (await post(t, secret, toolCall(1, name, args))) as Answer;
  assert.equal(answer.result?.isError, true, JSON.stringify(answer));
  return (JSON.parse(answer.result.content[0]!.text) as { error: Record<string, string> }).error;
}

eachDialect('mcp tool errors', (ctx) => {
  let s: Seeded;
  before(async () => {
    const t = ctx();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    s = await seedWorkspace(t);
  });

  test("arguments a tool refuses are a tool error with the API's error object naming the argument", async () => {
    const t = ctx();
    const cases: [string, unknown, string, string | undefined][] = [
      ['read_from_rolodex', {}, 'parameter_missing', 'path'],
      ['read_from_rolodex', undefined, 'parameter_missing', 'path'],
      ['read_from_rolodex', { path: 5 }, 'invalid_type', 'path'],
      ['read_from_rolodex', { path: '/v1/accounts', extra: 1 }, 'unknown_field', 'extra'],
      ['read_from_rolodex', { path: '/v1/accounts', query: { limit: { a: 1 } } }, 'invalid_type', 'query.limit'],
      ['read_from_rolodex', { path: '/v1/accounts', query: { $name: [['x']] } }, 'invalid_type', 'query.$name[0]'],
      ['write_to_rolodex', { path: '/v1/accounts', idempotencyKey: 'k'.repeat(256) }, 'invalid_value', 'idempotencyKey'],
      ['write_to_rolodex', { path: '/v1/accounts', idempotencyKey: '' }, 'invalid_value', 'idempotencyKey'],
      ['write_to_rolodex', { path: '/v1/accounts', method: 'PUT' }, 'invalid_value', 'method'],
      ['write_to_rolodex', { path: '/v1/accounts', body: [1] }, 'invalid_type', 'body'],
      ['write_to_rolodex', { method: 'DELETE' }, 'parameter_missing', 'path'],
      ['search_api_docs', { query: 'x', limit: 0 }, 'invalid_value', 'limit'],
      ['search_api_docs', { query: 'x', limit: 1.5 }, 'invalid_type', 'limit'],
      ['search_api_docs', { query: 5 }, 'invalid_type', 'query'],
      ['get_api_details', { method: 'PATCH', path: '/v1/accounts' }, 'invalid_value', 'method'],
      ['get_api_details', {}, 'parameter_missing', 'operationId'],
      ['get_api_details', { method: 'GET' }, 'parameter_missing', 'path'],
      ['get_api_details', { path: '/v1/accounts/{id}' }, 'parameter_missing', 'method'],
      // An operationId with a path or method of another operation names two: neither is chosen.
      ['get_api_details', { operationId: 'createContact', path: '/v1/accounts', method: 'POST' }, 'invalid_value', 'path'],
      ['get_api_details', { operationId: 'createContact', method: 'GET' }, 'invalid_value', 'method'],
      ['get_current_user', { me: true }, 'unknown_field', 'me'],
    ];
    for (const [name, args, code, param] of cases) {
      const what = `${name} ${JSON.stringify(args)}`;
      const error = await toolError(t, s.secret, name, args);
      assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'requestId', 'type'], what);
      assert.deepEqual([error.type, error.code, error.param], ['bad_request', code, param], what);
      assert.match(error.requestId!, /^req_/, what);
      assert.doesNotMatch(error.message!, /MCP error|-32602/, what);
    }
    // An operationId with its own path and method, as search_api_docs returns the three, names it.
    const named = (await post(t, s.secret, toolCall(1, 'get_api_details', { operationId: 'createContact', path: '/v1/contacts', method: 'POST' }))) as Answer;
    assert.equal(JSON.parse(named.result!.content[0]!.text).operationId, 'createContact');
    // A path refused as text keeps its own code (docs/mcp.md §What a tool can reach).
    const path = await toolError(t, s.secret, 'read_from_rolodex', { path: '/metrics' });
    assert.deepEqual([path.code, path.param], ['invalid_parameter', 'path']);
    // Nothing refused was sent: no account was created by the writes above.
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });

  test('a tools/call without params, with arguments that are no object, or naming no tool is JSON-RPC -32602', async () => {
    const t = ctx();
    const bad = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read_from_rolodex', arguments: 'a string' } },
      toolCall(4, 'no_such_tool', {}),
    ];
    const answers = (await post(t, s.secret, bad)) as Answer[];
    assert.deepEqual(
      answers.map((a) => [a.id, a.error?.code]),
      [
        [1, -32602],
        [2, -32602],
        [3, -32602],
        [4, -32602],
      ],
    );
    // MCP's protocol error for a name that is no tool, naming it (docs/mcp.md §Tools).
    assert.equal(answers[3]!.error!.message, 'MCP error -32602: Unknown tool: "no_such_tool"; tools/list lists the tools.');
  });

  test('an initialize or a tools/list whose params the protocol does not take is JSON-RPC -32602, not -32603', async () => {
    const t = ctx();
    const client = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } };
    for (const message of [
      { jsonrpc: '2.0', id: 1, method: 'initialize' },
      { jsonrpc: '2.0', id: 2, method: 'initialize', params: { ...client, protocolVersion: 5 } },
      { jsonrpc: '2.0', id: 3, method: 'initialize', params: { ...client, clientInfo: 'c' } },
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 5 } },
    ]) {
      const answer = (await post(t, s.secret, message)) as Answer;
      assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
      assert.match(answer.error.message, new RegExp(`Invalid ${message.method} request: `));
    }
    // Valid ones are answered as before: an unknown version gets the latest, a cursor is ignored.
    const init = await rpc<{ result: Record<string, unknown> }>(t, s.secret, {
      jsonrpc: '2.0',
      id: 5,
      method: 'initialize',
      params: { ...client, protocolVersion: '1999-01-01' },
    });
    assert.deepEqual(Object.keys(init.result).sort(), ['capabilities', 'instructions', 'protocolVersion', 'serverInfo']);
    assert.equal(init.result.protocolVersion, LATEST_PROTOCOL_VERSION);
    assert.deepEqual(init.result.capabilities, { tools: { listChanged: false } });
    const list = await rpc<{ result: { tools: unknown[] } }>(t, s.secret, { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { cursor: 'c' } });
    assert.equal(list.result.tools.length, 5);
  });
});

// The limiter's clock stands still, so no bucket refills between two calls of the test.
const frozen = Date.now();
eachDialect(
  'mcp tool rate limits',
  (ctx) => {
    before(async () => {
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    });

    test('get_current_user, search_api_docs and get_api_details spend the Read bucket; an empty one answers the REST 429', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const local: [string, unknown][] = [
        ['get_current_user', {}],
        ['search_api_docs', { query: 'contact' }],
        ['get_api_details', { operationId: 'getAccount' }],
      ];
      for (const [name, args] of local) assert.equal(((await post(t, s.secret, toolCall(1, name, args))) as Answer).result?.isError, undefined, name);
      const rest = await call(t, s.secret, 'GET', '/v1/auth/validate');
      assert.equal(rest.statusCode, 429, 'the REST read finds the bucket the tools emptied');
      for (const [name, args] of local) {
        const error = await toolError(t, s.secret, name, args);
        assert.deepEqual({ ...error, requestId: '' }, { ...rest.json().error, requestId: '' }, name);
        assert.match(error.message!, /retry after \d+ s/);
      }
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /rolodex_rate_limited_total\{operation="get_current_user",category="Read"\} 1/);
      // The bucket is checked first, as REST checks it before the request: bad arguments too.
      assert.equal((await toolError(t, s.secret, 'get_current_user', { me: true })).code, 'rate_limited');
      const write = await post(t, s.secret, toolCall(1, 'write_to_rolodex', { path: '/v1/accounts', body: { fields: { $name: 'Writes' } } }));
      assert.equal((write as Answer).result?.isError, undefined, 'writes have a bucket of their own');
    });

    test('a batch of 100 calls gets as many answers as the bucket holds; an API call through a tool spends one token, not two', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const batch = Array.from({ length: 100 }, (_, i) => toolCall(i + 1, 'get_current_user', {}));
      const answers = (await post(t, s.secret, batch)) as Answer[];
      assert.equal(answers.filter((a) => a.result?.isError !== true).length, 3);
      const other = await seedWorkspace(t);
      const mixed = [toolCall(1, 'get_current_user', {}), toolCall(2, 'read_from_rolodex', { path: '/v1/auth/validate' })];
      const first = (await post(t, other.secret, mixed)) as Answer[];
      assert.deepEqual(
        first.map((a) => a.result?.isError),
        [undefined, undefined],
      );
      assert.equal(((await post(t, other.secret, toolCall(3, 'search_api_docs', { query: '' }))) as Answer).result?.isError, undefined, 'the third token');
      assert.equal((await toolError(t, other.secret, 'read_from_rolodex', { path: '/v1/auth/validate' })).code, 'rate_limited');
    });
  },
  {
    env: { RATE_LIMIT_READ: '3' },
    deps: async (deps, config) => {
      deps.rateLimiter = await createRateLimiter(config, deps.logger, { metrics: deps.metrics, clock: () => frozen });
    },
  },
);
