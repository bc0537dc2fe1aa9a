// Abuse on real sockets (issue 7, part 6): hundreds of connections trickling headers or bodies
// must not stop /healthz from answering within a second, and an oversized JSON body is refused
// from its Content-Length, before it is sent.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { rolodexCli, startServerProcess, type ServerProcess } from '../helpers/process.ts';

const SLOW_HEADER_CONNECTIONS = 200;
const SLOW_BODY_CONNECTIONS = 100;

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

describe('abuse [sqlite]', () => {
  let server: ServerProcess;
  let dataDir: string;
  let secret: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rolodex-abuse-'));
    const env = { DATA_DIR: dataDir };
    const ws = JSON.parse(rolodexCli(env, 'workspace', 'create', '--name', 'A', '--json').stdout).id;
    secret = JSON.parse(rolodexCli(env, 'key', 'create', '--workspace', ws, '--json').stdout).secret;
    server = await startServerProcess(env);
  });
  after(async () => {
    await server.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test(`${SLOW_HEADER_CONNECTIONS} slow-header and ${SLOW_BODY_CONNECTIONS} slow-body connections leave /healthz answering within a second`, async () => {
    const port = Number(new URL(server.baseUrl).port);
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < SLOW_HEADER_CONNECTIONS; i++) {
        const s = await open(port);
        s.on('error', () => {});
        s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        sockets.push(s);
      }
      const body = '{"name":"' + 'x'.repeat(1000);
      for (let i = 0; i < SLOW_BODY_CONNECTIONS; i++) {
        const s = await open(port);
        s.on('error', () => {});
        s.write(
          `POST /v1/lists HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nService-Version: 2026-03-01\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length + 1000}\r\n\r\n`,
        );
        s.write(body.slice(0, 10));
        sockets.push(s);
      }
      // Keep trickling one byte a connection while measuring.
      const trickle = setInterval(() => {
        for (const s of sockets) if (!s.destroyed) s.write('x');
      }, 200);
      const timings: number[] = [];
      try {
        for (let i = 0; i < 10; i++) {
          const t0 = performance.now();
          const res = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
          assert.equal(res.status, 200);
          timings.push(performance.now() - t0);
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        clearInterval(trickle);
      }
      const worst = Math.max(...timings);
      console.log(`# /healthz under ${sockets.length} slow connections: worst ${worst.toFixed(1)} ms over ${timings.length} calls`);
      assert.ok(worst < 1000, `worst /healthz took ${worst} ms`);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  test('an oversized JSON body is refused from its Content-Length, without being sent', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const s = await open(port);
    const reply = new Promise<string>((resolve) => {
      let data = '';
      s.on('data', (d) => {
        data += String(d);
        if (data.includes('\r\n\r\n') && data.includes('}')) resolve(data);
      });
      s.on('close', () => resolve(data));
    });
    s.write(
      `POST /v1/lists HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nService-Version: 2026-03-01\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n{"fields":`,
    );
    // Unref'd: once the reply has come, the timer does not hold the file's process open.
    const text = await Promise.race([reply, new Promise<string>((r) => setTimeout(() => r('timeout'), 5000).unref())]);
    s.destroy();
    assert.match(text, /^HTTP\/1.1 413/);
    assert.match(text, /"code":"payload_too_large"/);
  });
});
