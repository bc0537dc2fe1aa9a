// Refusals of a body over a real connection (docs/errors.md §Request bodies): the answer reaches a
// client that sends its whole body before it reads, and a body refused once read in full leaves
// the connection open for the requests sent after it.
import assert from 'node:assert/strict';
import { type AddressInfo, connect } from 'node:net';
import { test } from 'node:test';
import { eachDialect, seedWorkspace, type TestApp, VERSION } from '../helpers/app.ts';

/**
 * Writes `head` and then `body` on a new connection, as a client that sends its whole request
 * before it reads (Python's http.client) does, and reads until `answers` complete answers have
 * come (each with a Content-Length); what the server sent and the error the connection met, if any,
 * by then and until the last byte was written.
 */
function exchange(port: number, head: string, body: Buffer, answers: number): Promise<{ text: string; error: string | null }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    let error: string | null = null;
    let written = false;
    const complete = () => {
      let at = 0;
      for (let n = 0; n < answers; n++) {
        const end = text.indexOf('\r\n\r\n', at);
        const length = /content-length: (\d+)/i.exec(text.slice(at, end));
        if (end === -1 || !length || text.length < end + 4 + Number(length[1])) return false;
        at = end + 4 + Number(length[1]);
      }
      return true;
    };
    const settle = () => {
      if (error === null && !(written && complete())) return;
      s.destroy();
      resolve({ text, error });
    };
    s.on('data', (d) => {
      text += String(d);
      settle();
    });
    s.on('error', (err: Error & { code?: string }) => {
      error = err.code ?? err.message;
      settle();
    });
    s.on('close', () => resolve({ text, error: error ?? (written && complete() ? null : 'closed') }));
    s.write(head);
    s.write(body, () => {
      written = true;
      settle();
    });
  });
}

/** The port of the test app, listening from the first call on. */
async function listen(t: TestApp): Promise<number> {
  if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as AddressInfo).port;
}

const headOf = (secret: string, type: string, length: number) =>
  `POST /v1/lists HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nService-Version: ${VERSION}\r\n` +
  `Content-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;

/** A request sent after the one refused, on the same connection. */
const next = (secret: string) => `GET /v1/auth/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nService-Version: ${VERSION}\r\n\r\n`;

const statusesOf = (text: string) => [...text.matchAll(/HTTP\/1.1 (\d+) /g)].map((m) => m[1]);

eachDialect('early answers over a connection', (ctx) => {
  test('a body over 1 MiB, or not JSON, sent whole before reading: the 413 or 415 comes, the rest is read and dropped, the connection stays', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const port = await listen(t);
    // Three times the limit, and under what the server reads and drops after its answer (4 MB).
    // Closed at once instead, the connection is reset under the client still sending: curl and
    // Python's http.client then report the reset, not the answer.
    const body = Buffer.alloc(3 * 1024 * 1024, 'a');
    for (const [type, status, code] of [
      ['application/json', '413', 'payload_too_large'],
      ['application/octet-stream', '415', 'unsupported_media_type'],
    ] as const) {
      const { text, error } = await exchange(port, headOf(s.secret, type, body.length), Buffer.concat([body, Buffer.from(next(s.secret))]), 2);
      assert.equal(error, null, `${type}: the connection met ${error}; got ${JSON.stringify(text.slice(0, 300))}`);
      assert.deepEqual(statusesOf(text), [status, '200']);
      assert.equal(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4, text.indexOf('}}') + 2)).error.code, code);
    }
  });

  test('a body refused once read in full leaves the connection open: the next request on it is answered', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const port = await listen(t);
    for (const [type, body, status, code] of [
      ['application/json', '{bad}', '400', 'invalid_json'],
      ['application/json; charset=iso-8859-1', '{}', '415', 'unsupported_media_type'],
      ['text/plain', 'hello', '415', 'unsupported_media_type'],
    ] as const) {
      const { text, error } = await exchange(port, headOf(s.secret, type, body.length) + body + next(s.secret), Buffer.alloc(0), 2);
      assert.equal(error, null, `${type}: the connection met ${error}; got ${text}`);
      assert.deepEqual(statusesOf(text), [status, '200'], `${type}: ${text}`);
      assert.match(text, new RegExp(`"code":"${code}"`));
    }
  });

  test('an answer given before the body is read (the API, /mcp) waits for the rest of it rather than closing under the client', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const port = await listen(t);
    const auth = `Authorization: Bearer ${s.secret}\r\nService-Version: ${VERSION}\r\n`;
    for (const [path, extra, status] of [
      ['/v1/lists', 'Content-Type: application/json\r\n', '413'],
      ['/v1/lists', 'Content-Type: text/plain\r\n', '415'],
      ['/mcp', 'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n', '413'],
    ] as const) {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      let closed = false;
      socket.on('data', (d) => (text += String(d)));
      socket.on('error', () => {});
      socket.on('close', () => (closed = true));
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}${extra}Content-Length: ${50 * 1024 * 1024}\r\n\r\n{"a":`);
      const deadline = Date.now() + 5000;
      while (!/\r\n\r\n.*\}$/s.test(text) && !closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.match(text, new RegExp(`^HTTP/1.1 ${status} `), `${path}: ${text}`);
      // Still sending: the server reads on for a while rather than resetting the connection.
      socket.write(Buffer.alloc(64 * 1024, ' '));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(closed, false, `${path}: the server closed the connection under a client still sending`);
      socket.destroy();
    }
  });
});
