// A request that reaches the server after it has begun to close (the next request on a keep-alive
// connection whose previous one is still being answered) is answered 503 service_unavailable in
// the one error shape, with its request id, `Retry-After: 1` and `Connection: close`
// (docs/errors.md §Requests in general), never with a body of another shape.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';

/** The HTTP/1.1 responses in `raw`, in order: status, lower-cased headers and body. */
function responses(raw: string): Array<{ status: number; headers: Record<string, string>; body: string }> {
  const out = [];
  let rest = raw;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(statusLine?.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

for (const dialect of testDialects()) {
  describe(`a request that arrives while the server closes [${dialect}]`, () => {
    let t: TestApp;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    before(async () => {
      // A slow answer that keeps its connection busy while the server begins to close.
      t = await buildTestApp(dialect, { routes: (app) => app.get('/test/slow', async () => (await held, { ok: true })) });
    });
    after(async () => {
      release();
      await t.close();
    });

    test('is answered 503 service_unavailable in the error shape, and the connection closes', async () => {
      const s = await seedWorkspace(t);
      const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const socket = connect(Number(new URL(base).port), '127.0.0.1');
      let raw = '';
      socket.setEncoding('utf8').on('data', (d: string) => (raw += d));
      const ended = new Promise<void>((r) => socket.on('close', () => r()));
      await new Promise<void>((r) => socket.on('connect', () => r()));
      socket.write('GET /test/slow HTTP/1.1\r\nHost: rolodex.test\r\n\r\n');
      await new Promise((r) => setTimeout(r, 100));

      const closed = t.app.close();
      await new Promise((r) => setTimeout(r, 100));
      socket.write(`GET /v1/lists HTTP/1.1\r\nHost: rolodex.test\r\nAuthorization: Bearer ${s.secret}\r\nService-Version: 2026-03-01\r\n\r\n`);
      await new Promise((r) => setTimeout(r, 100));
      release();
      await ended;
      await closed;

      const [slow, refused] = responses(raw);
      assert.equal(slow?.status, 200, raw);
      assert.equal(refused?.status, 503, raw);
      const body = JSON.parse(refused.body);
      assert.deepEqual(Object.keys(body), ['error']);
      assert.equal(body.error.type, 'service_unavailable');
      assert.equal(body.error.code, 'service_unavailable');
      assert.equal(body.error.requestId, refused.headers['x-request-id']);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refused.headers.connection, 'close');
    });
  });
}
