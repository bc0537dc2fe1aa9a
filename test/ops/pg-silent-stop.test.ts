// A stop while PostgreSQL is silent (it accepts connections, and what it had open stays open,
// but it answers nothing) ends as any stop does (docs/deploy.md §Start and stop): the request in
// flight is answered 503 at its deadline, the pools close within their bound, and every process
// exits with code 0 well within the 10 s stop limit, with one worker and with two. The handle's
// close itself ends within its bound and leaves no socket of the database open.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, createServer, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { generateSecret } from '../../src/auth/secrets.ts';
import { openDb } from '../../src/db/database.ts';
import { write } from '../../src/db/index.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { BIN, cleanUp, launch, type Launched, until } from '../helpers/launch.ts';
import { freePort } from '../helpers/process.ts';

// Generous: the suite shares two cores. The stop limit is 10 s; a stop that waited for it exits 1.
const START_MS = 60_000;
const STOP_MS = 9500;
// A close ends its clients within a second (docs/deploy.md §Start and stop), and a loaded machine
// may add to it.
const CLOSE_MS = 2500;

/** The sockets of this process still open to `port`. */
function socketsTo(port: number): Socket[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h): h is Socket => h instanceof Socket && h.remotePort === port && !h.destroyed);
}

/** A relay to PostgreSQL that, once silenced, passes nothing on and closes nothing. */
async function relay(target: URL): Promise<{ port: number; silence(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let silent = false;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  };
  // Half-open allowed: a silent server does not close its side when the client closes its own.
  const server = createServer({ allowHalfOpen: true }, (client) => {
    track(client);
    if (silent) return;
    const up = connect({ port: Number(target.port || 5432), host: target.hostname, allowHalfOpen: true });
    track(up);
    client.on('data', (d) => !silent && up.write(d));
    up.on('data', (d) => !silent && client.write(d));
    client.on('end', () => !silent && up.end());
    up.on('end', () => !silent && client.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    silence: () => (silent = true),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** GET /v1/lists with a key the database is asked about: its status and body once answered. */
function lookUp(base: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/v1/lists`, {
      agent: false,
      headers: { authorization: `Bearer ${generateSecret().secret}`, 'service-version': '2026-03-01' },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += String(d)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  // Its tests run side by side: each waits mostly for a deadline, and each has a relay of its own.
  describe(`a stop while PostgreSQL does not answer [${dialect}]`, { concurrency: true }, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
    });
    after(async () => {
      await tdb.drop();
    });

    test('a handle closes within its bound, its statement in flight failed, no socket left open', async () => {
      const r = await relay(new URL(tdb.databaseUrl!));
      try {
        const url = new URL(tdb.databaseUrl!);
        url.host = `127.0.0.1:${r.port}`;
        const db = openDb({ dataDir: tdb.dataDir, databaseUrl: url.toString(), schema: tdb.schema!, statementTimeoutMs: 5000 });
        // A connection of the shared lane and one of the transactions' are open.
        await Promise.all([sql`select 1`.execute(db.kysely), write(db.kysely, (tx) => sql`select 1`.execute(tx))]);
        r.silence();
        const unanswered = sql`select 1`.execute(db.kysely).then(
          () => 'answered',
          () => 'failed',
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        const started = performance.now();
        await db.close();
        const ms = performance.now() - started;
        assert.ok(ms < CLOSE_MS, `closed after ${Math.round(ms)} ms`);
        assert.equal(await unanswered, 'failed');
        assert.deepEqual(socketsTo(r.port).length, 0, 'sockets to the database left open');
      } finally {
        await r.close();
      }
    });

    for (const workers of ['1', '2'])
      test(`WORKERS=${workers}: the request in flight is answered 503, and the server exits 0 within the limit`, async () => {
        const r = await relay(new URL(tdb.databaseUrl!));
        const url = new URL(tdb.databaseUrl!);
        url.host = `127.0.0.1:${r.port}`;
        const port = await freePort();
        let l: Launched | undefined;
        try {
          l = launch(process.execPath, [BIN, 'serve'], {
            DATA_DIR: tdb.dataDir,
            DATABASE_URL: url.toString(),
            PORT: String(port),
            WORKERS: workers,
          });
          const out = l.output;
          await until('listening', () => /rolodex listening on/.test(out()), START_MS, out);
          r.silence();
          const answered = lookUp(`http://127.0.0.1:${port}`);
          // The request reaches the database (a worker reads its key) before the stop.
          await new Promise((resolve) => setTimeout(resolve, 500));
          const sent = performance.now();
          l.child.kill('SIGTERM');
          const { code, signal } = await l.exited;
          const ms = performance.now() - sent;
          const answer = await answered;
          assert.equal(answer.status, 503, answer.body);
          assert.match(answer.body, /"code":"service_unavailable"/);
          assert.deepEqual({ code, signal }, { code: 0, signal: null }, out());
          assert.doesNotMatch(out(), /took too long/);
          assert.ok(ms < STOP_MS, `stopped after ${Math.round(ms)} ms`);
        } finally {
          cleanUp(l);
          await r.close();
        }
      });
  });
}
