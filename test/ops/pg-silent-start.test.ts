// A command started against a PostgreSQL that never answers (a host that drops packets, a server
// that accepts connections and says nothing) stops with its one line within
// DATABASE_CONNECT_TIMEOUT_MS, not after the driver's own 30 s (docs/deploy.md §Start and stop).
// A stop signal meanwhile ends the start at once, one line and exit code 0, in every mode. The
// database here is a TCP server that accepts and never writes a byte; no PostgreSQL is needed.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { silentServer } from '../helpers/faults.ts';
import { BIN, cleanUp, launch, type Launched } from '../helpers/launch.ts';
import { freePort, listening } from '../helpers/process.ts';

// The bound the tests set, and how long a command may take beyond it on a loaded machine: well
// under the 30 s a connection attempt waited without a bound of the process's own.
const BOUND_MS = 1000;
const SLACK_MS = 8000;
const LINE = /cannot reach the PostgreSQL database at 127\.0\.0\.1:\d+\/rolodex \(no answer within 1 s, DATABASE_CONNECT_TIMEOUT_MS\)/;

describe('PostgreSQL that accepts connections and never answers', () => {
  let server: Awaited<ReturnType<typeof silentServer>>;
  let url = '';
  let dataDir = '';
  before(async () => {
    server = await silentServer();
    url = `postgres://rolodex@127.0.0.1:${server.port}/rolodex`;
    dataDir = mkdtempSync(join(tmpdir(), 'rolodex-silent-pg-'));
  });
  after(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('rolodex migrate stops with one line within the bound', async () => {
    const err: string[] = [];
    const started = performance.now();
    const code = await main(['migrate'], {
      out: () => {},
      err: (s) => err.push(s),
      env: { DATA_DIR: dataDir, DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_MS: String(BOUND_MS) },
      isTty: false,
    });
    const ms = performance.now() - started;
    assert.equal(code, 1);
    assert.match(err.join('\n'), LINE);
    assert.ok(ms >= BOUND_MS * 0.9 && ms < BOUND_MS + SLACK_MS, `${Math.round(ms)} ms`);
  });

  test('rolodex serve stops with one line and exit code 1 within the bound', async () => {
    let l: Launched | undefined;
    try {
      const started = performance.now();
      l = launch(process.execPath, [BIN, 'serve'], {
        DATA_DIR: dataDir,
        DATABASE_URL: url,
        DATABASE_CONNECT_TIMEOUT_MS: String(BOUND_MS),
        PORT: String(await freePort()),
      });
      const { code } = await l.exited;
      const ms = performance.now() - started;
      assert.equal(code, 1, l.output());
      assert.match(l.output(), LINE);
      assert.doesNotMatch(l.output(), /\n\s+at /, 'a stack');
      assert.ok(ms < BOUND_MS + SLACK_MS, `${Math.round(ms)} ms`);
    } finally {
      cleanUp(l);
    }
  });

  for (const [signal, workers] of [
    ['SIGTERM', '1'],
    ['SIGINT', '2'],
  ] as const)
    test(`${signal} to rolodex serve (WORKERS=${workers}) waiting for the database stops it at once, one line, exit code 0`, async () => {
      const silent = createServer();
      const db = await listening(silent);
      let l: Launched | undefined;
      try {
        const connected = once(silent, 'connection');
        l = launch(process.execPath, [BIN, 'serve'], {
          DATA_DIR: dataDir,
          DATABASE_URL: `postgres://rolodex@127.0.0.1:${db.port}/rolodex`,
          DATABASE_CONNECT_TIMEOUT_MS: '120000',
          PORT: String(await freePort()),
          WORKERS: workers,
        });
        await connected;
        const sent = performance.now();
        l.child.kill(signal);
        const { code, signal: died } = await l.exited;
        const ms = performance.now() - sent;
        assert.deepEqual({ code, died }, { code: 0, died: null }, l.output());
        assert.match(l.output(), new RegExp(`"signal":"${signal}".*"msg":"stopped before the server was ready"`));
        assert.ok(ms < SLACK_MS, `${Math.round(ms)} ms`);
      } finally {
        cleanUp(l);
        await db.close();
      }
    });
});
