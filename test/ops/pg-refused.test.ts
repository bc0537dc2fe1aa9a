// PostgreSQL refusing connections (docs/reliability.md §Lost connections): a burst of requests is
// answered 503 at once, none waiting in line for a refused connection attempt of its own until its
// deadline, and the service recovers by itself once the database accepts connections again.
// Between the app and PostgreSQL stands a relay that stops listening (connections refused) and
// listens again on the same port.
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { testDialects } from '../helpers/db.ts';
import { type FaultApp, faultApp, getter, readsAgain } from '../helpers/faults.ts';
import { seedWorkspace } from '../helpers/app.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';

// The deadline of every wait is DATABASE_STATEMENT_TIMEOUT_MS and a second: 11 s. An answer within
// half of it did not wait for it, however loaded the machine that runs the test.
const ENV = { DATABASE_STATEMENT_TIMEOUT_MS: '10000' };
const PROMPT_MS = 5500;

/** A relay to PostgreSQL on a port of its own, which can refuse connections and accept them again. */
async function relay(): Promise<{ port: number; refuse(): Promise<void>; accept(): Promise<void>; close(): Promise<void> }> {
  const target = new URL(TEST_DATABASE_URL);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = async () => {
    server = createServer((client) => {
      const up = connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, up]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(up).pipe(client);
    });
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  };
  // Refusing twice (the suite's clean-up after a test that failed while refusing) is a no-op.
  const refuse = async () => {
    const listening = server;
    server = undefined;
    const closing = listening ? new Promise((r) => listening.close(r)) : undefined;
    for (const s of sockets) s.destroy();
    await closing;
  };
  await listen();
  return { port, refuse, accept: listen, close: refuse };
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`PostgreSQL refusing connections, then accepting them again [${dialect}]`, () => {
    let r: Awaited<ReturnType<typeof relay>>;
    let f: FaultApp;
    before(async () => {
      r = await relay();
      f = await faultApp({ env: ENV, databaseUrl: (url) => url.replace(/@[^/]+\//, `@127.0.0.1:${r.port}/`) });
    });
    after(async () => {
      await f.close();
      await r.close();
    });

    test('a burst is answered 503 at once, and the service recovers by itself', async () => {
      const s = await seedWorkspace(f.t);
      const get = getter(f, s.secret);
      assert.equal((await get('/v1/lists')).status, 200);

      await r.refuse();
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 3 === 0
            ? fetch(`${f.base}/v1/lists`, {
                method: 'POST',
                headers: { authorization: `Bearer ${s.secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json' },
                body: JSON.stringify({ fields: { $name: `L${i}`, $objectType: 'account' } }),
                signal: AbortSignal.timeout(15_000),
              })
            : get(i % 3 === 1 ? '/v1/lists' : '/v1/contacts')
          ).then(async (res) => ({ status: res.status, body: await res.text(), ms: performance.now() - started })),
        ),
      );
      for (const a of answers) {
        assert.equal(a.status, 503, a.body);
        assert.equal(JSON.parse(a.body).error.code, 'service_unavailable');
      }
      const longest = Math.max(...answers.map((a) => a.ms));
      assert.ok(longest < PROMPT_MS, `the last answer came after ${Math.round(longest)} ms`);

      await r.accept();
      assert.equal(await readsAgain(get), 200, 'reads succeed again');
      const write = await fetch(`${f.base}/v1/lists`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json' },
        body: JSON.stringify({ fields: { $name: 'After', $objectType: 'account' } }),
      });
      assert.equal(write.status, 200, await write.text());
      assert.equal((await f.t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    });

    // docs/reliability.md §Lost connections, "The log": at 100 requests a second, a warning with its
    // stack for each was 100 stacks a second for as long as the outage lasted.
    test('an outage is logged in one line without a stack, and its end in another', async () => {
      const s = await seedWorkspace(f.t);
      const get = getter(f, s.secret);
      assert.equal((await get('/v1/lists')).status, 200);
      // The outage of the test before is over once the database answered the process's own probe.
      for (let i = 0; i < 50 && f.t.app.faults.database.down; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      const from = f.t.logs().length;
      await r.refuse();
      for (let round = 0; round < 3; round++) {
        const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i === 0 ? '/readyz' : '/v1/lists').then((res) => res.status)));
        assert.deepEqual(new Set(statuses), new Set([503]));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await r.accept();
      assert.equal(await readsAgain(get), 200, 'reads succeed again');
      const lines = () =>
        f.t
          .logs()
          .slice(from)
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { msg: string; level: number; err?: { stack?: string } });
      // The end is said once the database answers a probe of its own, within a few seconds.
      for (let i = 0; i < 50 && !lines().some((l) => l.msg === 'database reachable again'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      const said = lines().filter((l) => l.msg !== 'request');
      assert.deepEqual(
        said.map((l) => l.msg),
        ['database not reachable; requests that need it are answered 503 until it is back', 'database reachable again'],
      );
      assert.ok(!f.t.logs().slice(from).includes('"stack"'), 'a line carries a stack');
      // Each request still has its own line, with its status.
      assert.ok(lines().filter((l) => l.msg === 'request').length >= 31);
    });
  });
}
