// Requests as odd clients and proxies frame them, on real sockets and both databases
// (docs/errors.md §Before routing, §Request bodies; docs/design.md §Requests): an HTTP/1.1 request
// without Host, a body under a transfer coding other than chunked, two Authorization headers, two
// Idempotency-Key headers. Each is refused in the one error shape, and nothing is written.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, VERSION, type TestApp } from '../helpers/app.ts';

/** Sends raw bytes and resolves to everything the server answered before it closed the connection. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let out = '';
    socket.on('data', (c) => (out += String(c)));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

interface Answer {
  status: number;
  head: string;
  error: { type: string; code: string; param?: string; requestId: string; message: string };
}

function answerOf(text: string): Answer {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), head, error: (JSON.parse(body) as { error: Answer['error'] }).error };
}

async function listening(t: TestApp): Promise<number> {
  if (!t.app.server.listening) await t.app.listen({ host: '127.0.0.1', port: 0 });
  return (t.app.server.address() as { port: number }).port;
}

const LIST = '{"fields":{"$name":"Framed","$objectType":"account"}}';

/** A chunked request body: `text` in one chunk, then the last chunk. */
const chunked = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`;

eachDialect('HTTP framing', (ctx) => {
  test('an HTTP/1.1 request without Host is 400 malformed_request in the error shape, and the connection closes', async () => {
    const t = ctx();
    const port = await listening(t);
    for (const path of ['/v1/lists', '/healthz', '/no/such/route']) {
      // The second request would be answered if the connection stayed open.
      const text = await raw(port, `GET ${path} HTTP/1.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
      const a = answerOf(text);
      assert.equal(a.status, 400, `${path}: ${text}`);
      assert.deepEqual([a.error.type, a.error.code, a.error.param], ['bad_request', 'malformed_request', 'Host'], path);
      assert.match(a.head, new RegExp(`x-request-id: ${a.error.requestId}`, 'i'), path);
      assert.equal(text.match(/^HTTP\/1\.1 /gm)?.length, 1, `${path}: one answer, then the connection closed`);
    }
    // HTTP/1.0 has no Host requirement; an empty Host is a Host.
    assert.match(await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /);
    assert.match(await raw(port, 'GET /healthz HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 200 /);
  });

  test('an Expect other than 100-continue is 417 expectation_failed in the error shape, not served; the connection stays', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const port = await listening(t);
    const auth = `Authorization: Bearer ${s.secret}\r\nService-Version: ${VERSION}\r\n`;
    const text = await raw(
      port,
      `POST /v1/lists HTTP/1.1\r\nHost: x\r\n${auth}Expect: 200-ok\r\nX-Request-Id: trace-1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(LIST)}\r\n\r\n${LIST}GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    const next = text.indexOf('HTTP/1.1 200 OK');
    assert.ok(next > 0, `the next request on the connection is answered: ${text}`);
    const a = answerOf(text.slice(0, next));
    assert.equal(a.status, 417, text);
    assert.deepEqual([a.error.type, a.error.code, a.error.param, a.error.requestId], ['expectation_failed', 'expectation_failed', 'Expect', 'trace-1']);
    assert.match(a.head, /x-request-id: trace-1/i);
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 0, 'the refused create wrote nothing');
    // 100-continue is met as before.
    const cont = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
    assert.match(cont, /HTTP\/1\.1 200 OK/);
  });

  test('a CONNECT is 404 route_not_found in the error shape, not a connection closed without a word', async () => {
    const t = ctx();
    const port = await listening(t);
    const text = await raw(port, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n');
    const a = answerOf(text);
    assert.equal(a.status, 404, text);
    assert.deepEqual([a.error.type, a.error.code], ['not_found', 'route_not_found']);
    assert.match(a.head, new RegExp(`x-request-id: ${a.error.requestId}`, 'i'));
  });

  test('an HTTP/1.0 tool call without Host reaches the API it names', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const port = await listening(t);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_from_rolodex', arguments: { path: '/v1/lists' } } });
    const text = await raw(
      port,
      `POST /mcp HTTP/1.0\r\nAuthorization: Bearer ${s.secret}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n` +
        `MCP-Protocol-Version: 2025-06-18\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const [head = '', payload = ''] = text.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 200 /, text);
    const result = (JSON.parse(payload) as { result: { isError?: boolean; content: { text: string }[] } }).result;
    assert.equal(result.isError, undefined, payload);
    assert.equal((JSON.parse(result.content[0]!.text) as { totalCount: number }).totalCount, 0);
  });

  test('a body under a transfer coding other than chunked is 415 naming Transfer-Encoding, never read as plain JSON', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const port = await listening(t);
    const head = `POST /v1/lists HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.secret}\r\nService-Version: ${VERSION}\r\nContent-Type: application/json\r\nConnection: close\r\n`;
    for (const coding of ['gzip, chunked', 'deflate,chunked', 'identity, chunked']) {
      const text = await raw(port, `${head}Transfer-Encoding: ${coding}\r\n\r\n${chunked(LIST)}`);
      const a = answerOf(text);
      assert.equal(a.status, 415, `${coding}: ${text}`);
      assert.deepEqual([a.error.code, a.error.param], ['unsupported_media_type', 'Transfer-Encoding'], coding);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 0, 'nothing was created');
    const plain = await raw(port, `${head}Transfer-Encoding: chunked\r\n\r\n${chunked(LIST)}`);
    assert.match(plain, /^HTTP\/1\.1 200 /, plain);
  });

  test('two Authorization headers are 401 invalid_api_key with invalid_request, whichever comes first', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const port = await listening(t);
    const get = (...lines: string[]) =>
      raw(
        port,
        `GET /v1/auth/validate HTTP/1.1\r\nHost: x\r\nService-Version: ${VERSION}\r\nConnection: close\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`,
      );
    const good = `Authorization: Bearer ${s.secret}`;
    for (const lines of [
      [good, 'Authorization: Bearer rdx_other'],
      ['Authorization: Bearer rdx_other', good],
      [good, good],
      ['Authorization: Basic dXNlcjpwYXNz', good],
      [good, 'authorization: Basic dXNlcjpwYXNz'],
    ]) {
      const text = await get(...lines);
      const a = answerOf(text);
      assert.equal(a.status, 401, `${lines.join(' + ')}: ${text}`);
      assert.deepEqual([a.error.code, a.error.param], ['invalid_api_key', 'Authorization'], lines.join(' + '));
      assert.match(a.head, /www-authenticate: Bearer realm="rolodex", error="invalid_request"/i, lines.join(' + '));
    }
    assert.match(await get(good), /^HTTP\/1\.1 200 /);
  });

  test('two Idempotency-Key headers are 400 invalid_idempotency_key, never one key made of both; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const port = await listening(t);
    const post = (...lines: string[]) =>
      raw(
        port,
        `POST /v1/lists HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.secret}\r\nService-Version: ${VERSION}\r\nContent-Type: application/json\r\n` +
          `Connection: close\r\nContent-Length: ${Buffer.byteLength(LIST)}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n${LIST}`,
      );
    // Node joins the lines as `k1, k2`; a proxy in front may have read either one alone.
    for (const lines of [
      ['Idempotency-Key: k1', 'Idempotency-Key: k2'],
      ['Idempotency-Key: k1', 'idempotency-key: k1'],
    ]) {
      const text = await post(...lines);
      const a = answerOf(text);
      assert.equal(a.status, 400, `${lines.join(' + ')}: ${text}`);
      assert.deepEqual([a.error.code, a.error.param], ['invalid_idempotency_key', 'Idempotency-Key'], lines.join(' + '));
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 0, 'nothing was created');
    assert.deepEqual(await t.deps.db.kysely.selectFrom('idempotency_keys').select('key').where('workspace_id', '=', s.workspaceId).execute(), []);
    // One line holding a comma is one key.
    assert.match(await post('Idempotency-Key: k1, k2'), /^HTTP\/1\.1 200 /);
  });
});
