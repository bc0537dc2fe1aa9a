// One delivery's POST against hostile endpoints (docs/events.md §Delivery): WEBHOOK_TIMEOUT_MS
// bounds the whole exchange, so an endpoint that answers its status and then trickles its body a
// byte at a time, or never sends its headers, fails with TIMEOUT in that time, never later.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
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
