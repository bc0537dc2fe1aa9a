// PostgreSQL behind a proxy that has lost it (a TCP load balancer with no backend up, a cloud SQL
// proxy that cannot reach its instance): the proxy accepts each connection and closes it at once,
// unanswered. That is the database not reachable, as a refused connection is (docs/reliability.md
// §Lost connections): requests are answered 503 promptly, never 500, and the service recovers by
// itself once the proxy reaches the database again.
import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { testDialects } from '../helpers/db.ts';
import { type FaultApp, faultApp, getter, readsAgain } from '../helpers/faults.ts';
import { seedWorkspace } from '../helpers/app.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';

const ENV = { DATABASE_STATEMENT_TIMEOUT_MS: '10000' };
// Half the deadline of a wait (DATABASE_STATEMENT_TIMEOUT_MS and a second): an answer within it did not wait for it.
const PROMPT_MS = 5500;

/** A relay to PostgreSQL that can lose it: then it accepts each connection and closes it at once. */
async function relay(): Promise<{ port: number; lose(): void; reach(): void; close(): Promise<void> }> {
  const target = new URL(TEST_DATABASE_URL);
  const sockets = new Set<Socket>();
  let lost = false;
  const server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => {});
    client.on('close', () => sockets.delete(client));
    if (lost) {
      // Read to the client's own close, as a proxy does, so that the connection ends both ways.
      client.resume();
      return void client.end();
    }
    const up = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(up).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    lose: () => {
      lost = true;
      for (const s of sockets) s.destroy();
    },
    reach: () => {
      lost = false;
    },
    close: async () => {
      const closed = new Promise((r) => server.close(r));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`PostgreSQL behind a proxy that closes every connection at once [${dialect}]`, () => {
    let r: Awaited<ReturnType<typeof relay>>;
    let f: FaultApp;
    before(async () => {
      r = await relay();
      f = await faultApp({ env: ENV, databaseUrl: (url) => url.replace(/@[^/]+\//, `@127.0.0.1:${r.port}/`) });
    });
    after(async () => {
      r.reach();
      await f.close();
      await r.close();
    });

    test('requests are answered 503 service_unavailable promptly, not 500, and the service recovers', async () => {
      const s = await seedWorkspace(f.t);
      const get = getter(f, s.secret);
      assert.equal((await get('/v1/lists')).status, 200);

      r.lose();
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => get(i % 2 ? '/v1/lists' : '/v1/contacts').then(async (res) => ({ status: res.status, body: await res.text() }))),
      );
      for (const a of answers) {
        assert.equal(a.status, 503, a.body);
        assert.equal(JSON.parse(a.body).error.code, 'service_unavailable');
      }
      assert.ok(performance.now() - started < PROMPT_MS, `answered after ${Math.round(performance.now() - started)} ms`);

      r.reach();
      assert.equal(await readsAgain(get), 200, 'reads succeed again');
    });
  });
}
