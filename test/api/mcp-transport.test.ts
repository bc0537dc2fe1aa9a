// The endpoint's transport (src/mcp/transport.ts) answers as the SDK's own stateless JSON
// transport does (docs/mcp.md §Sessions): the same POSTs, sent to an SDK server through each,
// get the same status and the same JSON-RPC body, for the exchanges a client makes and for the
// refusals (Accept, Content-Type, invalid JSON, batch size, invalid messages, a second initialize,
// the protocol version, a body over the size limit).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import * as z from 'zod';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MAX_REQUEST_BODY_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { MCP_BODY_LIMIT } from '../../src/mcp/routes.ts';
import { EndpointTransport, plainRequest, received } from '../../src/mcp/transport.ts';

const ACCEPT = 'application/json, text/event-stream';
const AUTH = { token: '', clientId: 'key_test', scopes: [] };

function server(): McpServer {
  const s = new McpServer({ name: 'same', version: '1.0.0' }, { instructions: 'same' });
  s.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }, extra) => ({
    content: [{ type: 'text', text: `${text} as ${extra.authInfo?.clientId}` }],
  }));
  s.registerTool('fails', {}, async () => {
    throw new Error('broken');
  });
  return s;
}

interface Seen {
  status: number;
  body: unknown;
}

/** A body sent as this text rather than as the JSON of a value. */
class Raw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
const textOf = (body: unknown) => (body instanceof Raw ? body.text : JSON.stringify(body));

async function viaSdk(body: unknown, headers: Record<string, string>): Promise<Seen> {
  const s = server();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await s.connect(transport);
  try {
    // The SDK reads and parses the body itself, as the endpoint does.
    const res = await transport.handleRequest(
      new Request('http://mcp.test/mcp', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: textOf(body) }),
      { authInfo: AUTH },
    );
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  } finally {
    await s.close();
  }
}

async function viaOurs(body: unknown, headers: Record<string, string>): Promise<Seen> {
  const s = server();
  const transport = new EndpointTransport();
  await s.connect(transport);
  try {
    const sent = { 'content-type': 'application/json', ...headers };
    // The route reads at most MCP_BODY_LIMIT bytes, and hands on the limit for a longer body.
    const bytes = new TextEncoder().encode(textOf(body));
    const got = received(bytes.length > MCP_BODY_LIMIT ? MCP_BODY_LIMIT : bytes, sent);
    const answer = 'refusal' in got ? got.refusal : await transport.answer(got.body, sent, AUTH);
    // The endpoint sends the value as JSON: compare what a client would read.
    return { status: answer.status, body: answer.body === undefined ? undefined : JSON.parse(JSON.stringify(answer.body)) };
  } finally {
    await s.close();
  }
}

const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const initialize = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
});
const ping = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'ping' });
const V = { accept: ACCEPT, 'mcp-protocol-version': '2025-06-18' };

const CASES: [string, unknown, Record<string, string>][] = [
  ['initialize', initialize(1), { accept: ACCEPT }],
  ['tools/list', { jsonrpc: '2.0', id: 2, method: 'tools/list' }, V],
  ['a tool call, with the request authInfo', call(3, 'echo', { text: 'hi' }), V],
  ['a tool that throws', call(4, 'fails'), V],
  ['invalid tool arguments', call(5, 'echo', { text: 5 }), V],
  ['an unknown tool', call(6, 'nope'), V],
  ['an unknown method', { jsonrpc: '2.0', id: 7, method: 'nothing/here' }, V],
  ['ping with a string id', ping('p-1'), V],
  ['a batch of two requests', [ping(8), call(9, 'echo', { text: 'b' })], V],
  ['a batch of one request', [ping(10)], V],
  ['a notification with a request', [{ jsonrpc: '2.0', method: 'notifications/initialized' }, ping(11)], V],
  ['notifications only', { jsonrpc: '2.0', method: 'notifications/initialized' }, V],
  ['an empty batch', [], V],
  ['a batch over the limit', Array.from({ length: 101 }, (_, i) => ping(i)), V],
  ['not a JSON-RPC message', { hello: 'world' }, V],
  ['a method that is not a string', { jsonrpc: '2.0', id: 12, method: 5 }, V],
  ['a batch holding one bad message', [ping(13), { jsonrpc: '1.0', id: 14, method: 'ping' }], V],
  ['two initializes in a batch', [initialize(15), initialize(16)], { accept: ACCEPT }],
  ['an unsupported protocol version', ping(17), { accept: ACCEPT, 'mcp-protocol-version': '1999-01-01' }],
  ['initialize with any protocol version header', initialize(18), { accept: ACCEPT, 'mcp-protocol-version': '1999-01-01' }],
  ['no protocol version header', ping(19), { accept: ACCEPT }],
  ['Accept without text/event-stream', ping(20), { accept: 'application/json' }],
  ['no Accept', ping(21), {}],
  ['a body that is not JSON', new Raw('{"jsonrpc": "2.0",'), V],
  ['an empty body', new Raw(''), V],
  ['a body with a byte-order mark', new Raw(`\uFEFF${JSON.stringify(ping(22))}`), V],
  ['Content-Type text/plain', ping(23), { ...V, 'content-type': 'text/plain' }],
  ['Content-Type text/plain naming application/json', ping(24), { ...V, 'content-type': 'text/plain; a=application/json' }],
  ['Content-Type with a charset, in capitals', ping(25), { ...V, 'content-type': 'Application/JSON; charset=utf-8' }],
  ['not JSON and not Acceptable', new Raw('nope'), { accept: 'application/json', 'content-type': 'text/plain' }],
  ['a body of 2 MiB', { ...ping(27), params: { pad: 'x'.repeat(2 << 20) } }, V],
  ['a body over the limit', { ...ping(28), params: { pad: 'x'.repeat(MCP_BODY_LIMIT) } }, V],
  ['a body over the limit, not Acceptable', { ...ping(29), params: { pad: 'x'.repeat(MCP_BODY_LIMIT) } }, { accept: 'application/json' }],
  ['a body over the limit as text/plain', { ...ping(30), params: { pad: 'x'.repeat(MCP_BODY_LIMIT) } }, { ...V, 'content-type': 'text/plain' }],
  ['a request named notifications/cancelled', { jsonrpc: '2.0', id: 31, method: 'notifications/cancelled', params: { requestId: 99 } }, V],
  ['a request named notifications/cancelled, naming itself', { jsonrpc: '2.0', id: 32, method: 'notifications/cancelled', params: { requestId: 32 } }, V],
  [
    'a NUL and a __proto__ key, which the transport leaves alone',
    new Raw('{"jsonrpc":"2.0","id":26,"method":"ping","params":{"a\\u0000":{"__proto__":{}}}}'),
    V,
  ],
];

test("the endpoint's body limit is the SDK transport's", () => {
  assert.equal(MCP_BODY_LIMIT, DEFAULT_MAX_REQUEST_BODY_SIZE);
});

for (const [name, body, headers] of CASES) {
  // A transport that never answers fails the test rather than holding the run.
  test(`as the SDK's transport: ${name}`, { timeout: 10_000 }, async () => {
    assert.deepEqual(await viaOurs(body, headers), await viaSdk(body, headers));
  });
}

test('one transport answers POSTs at once, each with its own requests under its own ids', async () => {
  const s = server();
  const transport = new EndpointTransport();
  await s.connect(transport);
  const who = (clientId: string) => ({ ...AUTH, clientId });
  const [a, b, c] = await Promise.all([
    transport.answer(call(1, 'echo', { text: 'a' }), V, who('key_a')),
    transport.answer([ping(2), call(1, 'echo', { text: 'b' })], V, who('key_b')),
    transport.answer(call(1, 'echo', { text: 'c' }), V, who('key_c')),
  ]);
  const text = (m: unknown) => (m as { result: { content: { text: string }[] } }).result.content[0]?.text;
  assert.deepEqual([a.status, b.status, c.status], [200, 200, 200]);
  assert.equal((a.body as { id: number }).id, 1);
  assert.equal(text(a.body), 'a as key_a');
  const [pong, echoed] = b.body as { id: number }[];
  assert.deepEqual([pong?.id, echoed?.id], [2, 1]);
  assert.equal(text(echoed), 'b as key_b');
  assert.equal(text(c.body), 'c as key_c');
  await s.close();
});

test('a cancellation reaches only a request of its own POST', async () => {
  const s = server();
  let aborted: boolean | undefined;
  s.registerTool('slow', {}, async (extra) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    aborted = extra.signal.aborted;
    return { content: [{ type: 'text', text: 'done' }] };
  });
  const transport = new EndpointTransport();
  await s.connect(transport);
  const slow = transport.answer(call(1, 'slow'), V, AUTH);
  // Another POST cancels "its" requests 1 to 4, which it never sent: the first one's call goes on.
  const cancel = (requestId: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
  const other = await transport.answer([1, 2, 3, 4].map(cancel), V, AUTH);
  assert.equal(other.status, 202);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(aborted, false);
  assert.equal((await slow).status, 200);
  await s.close();
});

test(
  'a request cancelled by a notification of its own POST is not waited for: the others are answered, or 202 when none is left',
  { timeout: 10_000 },
  async () => {
    const s = server();
    let aborted: boolean | undefined;
    s.registerTool('slow', {}, async (extra) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      aborted = extra.signal.aborted;
      return { content: [{ type: 'text', text: 'done' }] };
    });
    const transport = new EndpointTransport();
    await s.connect(transport);
    const cancel = (requestId: number | string) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
    // The SDK's own transport waits for ever on these POSTs: the server sends no response for a
    // cancelled request.
    const some = await transport.answer([call(1, 'slow'), ping(2), cancel(1)], V, AUTH);
    assert.equal(some.status, 200);
    assert.deepEqual(some.body, { jsonrpc: '2.0', id: 2, result: {} });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(aborted, true);
    assert.deepEqual(await transport.answer([ping('p'), cancel('p')], V, AUTH), { status: 202 });
    // A cancellation sent before its request reaches nothing: the request runs and is answered.
    const early = await transport.answer([cancel(3), ping(3)], V, AUTH);
    assert.deepEqual(early, { status: 200, body: { jsonrpc: '2.0', id: 3, result: {} } });
    await s.close();
  },
);

test('a plain request checked by hand is what the schema parses it to; anything else is left to the schema', () => {
  const plain: unknown[] = [
    call(1, 'echo', { text: 'x' }),
    ping('p'),
    { jsonrpc: '2.0', id: 0, method: 'tools/list', params: {} },
    { jsonrpc: '2.0', id: -3, method: 'x', params: { a: [1, { b: 2 }], c: null } },
  ];
  for (const m of plain) assert.deepEqual(plainRequest(m), JSONRPCMessageSchema.parse(m));
  const others: unknown[] = [
    { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { progressToken: 1 } } },
    { jsonrpc: '2.0', id: 1.5, method: 'x' },
    { jsonrpc: '2.0', id: null, method: 'x' },
    { jsonrpc: '2.0', id: 1, method: 'x', params: [] },
    { jsonrpc: '2.0', id: 1, method: 'x', params: null },
    { jsonrpc: '2.0', id: 1, method: 'x', extra: true },
    { jsonrpc: '1.0', id: 1, method: 'x' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 1, result: {} },
    [ping(1)],
    null,
  ];
  for (const m of others) assert.equal(plainRequest(m), undefined, JSON.stringify(m));
});
