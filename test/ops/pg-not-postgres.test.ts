// A DATABASE_URL whose host and port answer, but not as PostgreSQL (an HTTP server there, the
// API's own port, a server that closes every connection at once) is refused at once with one line
// saying so, by `serve` and every command (docs/deploy.md §Start and stop). postgres.js opened
// such a connection again each time the peer closed it before it was ready, a new connection
// every few milliseconds, and the connect timeout started over with each: the command never
// ended. No PostgreSQL is needed: the peers are servers of the test's own.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, cleanUp, launch, type Launched } from '../helpers/launch.ts';
import { freePort, listening } from '../helpers/process.ts';

// The connect timeout is long, so that an end within KILL_MS is the refusal's, not the timeout's;
// KILL_MS leaves a cold start on a loaded machine (the suite's own processes beside it) its time.
const CONNECT_TIMEOUT_MS = 180_000;
const KILL_MS = 60_000;

/** Runs a command with DATABASE_URL at the port; its exit code, output and time, or killed after KILL_MS. */
async function run(args: string[], port: number, dataDir: string): Promise<{ code: number | null; output: string; ms: number }> {
  let l: Launched | undefined;
  const started = performance.now();
  try {
    l = launch(process.execPath, [BIN, ...args], {
      DATA_DIR: dataDir,
      DATABASE_URL: `postgres://rolodex@127.0.0.1:${port}/rolodex`,
      DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      PORT: String(await freePort()),
    });
    const launched = l;
    const timer = setTimeout(() => cleanUp(launched), KILL_MS);
    const { code } = await l.exited;
    clearTimeout(timer);
    return { code, output: l.output(), ms: performance.now() - started };
  } finally {
    cleanUp(l);
  }
}

const COMMANDS = [['serve'], ['migrate'], ['workspace', 'list']];

const PEERS: { name: string; make: () => Server; says: RegExp }[] = [
  {
    name: 'an HTTP server',
    make: () => createHttpServer((_req, res) => res.end()),
    says: /\(the server there is no PostgreSQL: it answered "HTTP\/1\.1 400 Bad Request"\): is it running, and is DATABASE_URL right\?/,
  },
  {
    name: 'a server that closes every connection at once',
    make: () => createServer((s) => s.end()),
    says: /\(the server there is no PostgreSQL: it closed the connection without answering\): is it running, and is DATABASE_URL right\?/,
  },
];

for (const peer of PEERS) {
  describe(`DATABASE_URL at ${peer.name}`, () => {
    let server: Awaited<ReturnType<typeof listening>>;
    let dataDir = '';
    before(async () => {
      server = await listening(peer.make());
      dataDir = mkdtempSync(join(tmpdir(), 'rolodex-not-pg-'));
    });
    after(async () => {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('serve, migrate and workspace list each stop with one line and exit code 1, long before the connect timeout', async () => {
      const results = await Promise.all(COMMANDS.map((args) => run(args, server.port, dataDir)));
      for (const [i, r] of results.entries()) {
        const what = `rolodex ${COMMANDS[i]!.join(' ')}`;
        assert.equal(r.code, 1, `${what} (exit code ${r.code} after ${Math.round(r.ms)} ms):\n${r.output.slice(-2000)}`);
        assert.match(r.output, new RegExp(`cannot reach the PostgreSQL database at 127\\.0\\.0\\.1:${server.port}/rolodex `), what);
        assert.match(r.output, peer.says, what);
        assert.equal(r.output.trim().split('\n').length, 1, `${what}: one line\n${r.output}`);
      }
    });
  });
}
