// One delivery's POST against hostile endpoints (docs/events.md §Delivery): WEBHOOK_TIMEOUT_MS
// bounds the whole exchange, so an endpoint that answers its status and then trickles its body a
// byte at a time, or never sends its headers, fails with TIMEOUT in that time, never later. A
// kept-alive connection that the endpoint closed as the delivery went out on it is no failure of
// the endpoint: the delivery is sent again on a new connection. A redirect fails naming its target.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { deliver } from '../../src/webhooks/sender.ts';

const SECRET = `whsec_${'A'.repeat(44)}`;

let server: Server;
let base = '';
const open = new Set<ServerResponse>();
const timers = new Set<NodeJS.Timeout>();

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      open.add(res);
      if (req.url === '/trickle') {
        // A 200 at once, then one byte every 100 ms for 5 s: never silent for long.
        res.writeHead(200);
        const tick = setInterval(() => res.write('x'), 100);
        timers.add(tick);
        const stop = setTimeout(() => {
          clearInterval(tick);
          res.end();
        }, 5000);
        timers.add(stop);
      } else if (req.url === '/ok') {
        res.statusCode = 204;
        res.end();
      } else if (req.url === '/moved') {
        res.writeHead(308, { location: '/hooks/rolodex/' });
        res.end();
      } else if (req.url === '/moved-badly') {
        res.writeHead(302, { location: 'http://[not a url' });
        res.end();
      }
      // '/silent': never answered.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

after(async () => {
  for (const t of timers) clearTimeout(t);
  for (const res of open) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const send = (path: string, timeoutMs: number) =>
  deliver({ url: `${base}${path}`, secret: SECRET, eventId: 'evt_x', body: '{}', timeoutMs, allowPrivate: true });

test('an answer trickled slower than WEBHOOK_TIMEOUT_MS allows fails with TIMEOUT, in that time', async () => {
  const started = performance.now();
  const attempt = await send('/trickle', 500);
  const took = performance.now() - started;
  assert.deepEqual(attempt, { ok: false, error: 'TIMEOUT' });
  assert.ok(took < 2000, `the attempt ended after ${Math.round(took)} ms, not about 500`);
});

test('an endpoint that never answers fails with TIMEOUT; a prompt one succeeds', async () => {
  const started = performance.now();
  assert.deepEqual(await send('/silent', 300), { ok: false, error: 'TIMEOUT' });
  assert.ok(performance.now() - started < 2000);
  assert.deepEqual(await send('/ok', 300), { ok: true, status: 204 });
});

test('a redirect is a failure that names where it points (redirects are not followed)', async () => {
  // What `webhook test` prints and `webhook list` shows as the last error: the operator sees the
  // address to subscribe instead (https://, a trailing slash), not a bare status.
  assert.deepEqual(await send('/moved', 1000), {
    ok: false,
    status: 308,
    error: `HTTP 308 to ${base}/hooks/rolodex/ (redirects are not followed)`,
  });
  assert.deepEqual(await send('/moved-badly', 1000), { ok: false, status: 302, error: 'HTTP 302 (redirects are not followed)' });
});

test('a kept-alive connection the endpoint closes as a delivery goes out on it: the delivery is sent again on a new one', async () => {
  // An endpoint that closes an idle connection without a Keep-Alive hint (gunicorn, uvicorn, a load
  // balancer) can close it the moment the next delivery arrives on it: here, every connection's
  // second request is met by the connection's close, unanswered; its first is answered 204.
  const sockets = new Set<Socket>();
  let answered = 0;
  const closer = createTcpServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => {});
    let buf = '';
    let served = 0;
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      const head = buf.indexOf('\r\n\r\n');
      if (head < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(buf.slice(0, head))?.[1] ?? 0);
      if (buf.length < head + 4 + length) return;
      buf = buf.slice(head + 4 + length);
      if (++served > 1) return void sock.destroy();
      answered++;
      sock.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => closer.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(closer.address() as { port: number }).port}/hook`;
    const one = (id: string) => deliver({ url, secret: SECRET, eventId: id, body: '{}', timeoutMs: 2000, allowPrivate: true });
    assert.deepEqual(await one('evt_1'), { ok: true, status: 204 });
    assert.deepEqual(await one('evt_2'), { ok: true, status: 204 }, 'sent again on a new connection, not failed with ECONNRESET');
    assert.equal(answered, 2);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => closer.close(() => resolve()));
  }
});
