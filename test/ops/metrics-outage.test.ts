// /metrics during a database outage (docs/deploy.md §Health checks and metrics): the outbox depth
// gauges read the database at each scrape, and a read that failed made the whole scrape a 500,
// one that went unanswered held it for the statement's deadline. The scrape is answered at once
// with those gauges unknown (no sample) and every other series as it is, when the operator needs it most.
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { type FaultApp, faultApp, getter, readsAgain } from '../helpers/faults.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';

// A wait for the database lasts DATABASE_STATEMENT_TIMEOUT_MS and a second: 11 s. A scrape within
// half of it did not wait for it.
const ENV = { DATABASE_STATEMENT_TIMEOUT_MS: '10000' };
const PROMPT_MS = 5500;

type Mode = 'relay' | 'refuse' | 'silent';

/** A relay to PostgreSQL that relays, closes every connection at once, or swallows what is sent. */
async function relay(): Promise<{ port: number; set(mode: Mode): void; close(): Promise<void> }> {
  const target = new URL(TEST_DATABASE_URL);
  const sockets = new Set<Socket>();
  let mode: Mode = 'relay';
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  };
  const server: Server = createServer((client) => {
    track(client);
    if (mode === 'refuse') return void client.destroy();
    if (mode === 'silent') return;
    const up = connect(Number(target.port || 5432), target.hostname);
    track(up);
    client.on('data', (d) => mode === 'relay' && up.write(d));
    up.on('data', (d) => mode === 'relay' && client.write(d));
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const cut = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as { port: number }).port,
    // Connections that saw the outage are cut as it ends: a stream that lost bytes is no protocol.
    set: (next) => {
      if (next !== 'silent') cut();
      mode = next;
    },
    close: async () => {
      cut();
      await new Promise((r) => server.close(r));
    },
  };
}

async function scrape(f: FaultApp): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${f.base}/metrics`, { signal: AbortSignal.timeout(PROMPT_MS) });
  return { status: res.status, body: await res.text(), ms: performance.now() - started };
}

function depths(body: string): string[] {
  return body.split('\n').filter((l) => /^rolodex_(webhook|email)_outbox_depth /.test(l));
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`/metrics while the database is out [${dialect}]`, () => {
    let r: Awaited<ReturnType<typeof relay>>;
    let f: FaultApp;
    before(async () => {
      r = await relay();
      f = await faultApp({ env: ENV, databaseUrl: (url) => url.replace(/@[^/]+\//, `@127.0.0.1:${r.port}/`) });
    });
    after(async () => {
      r.set('relay');
      await f.close();
      await r.close();
    });

    for (const outage of ['refuse', 'silent'] as const) {
      test(`a database that ${outage === 'refuse' ? 'refuses connections' : 'does not answer'}: the scrape answers at once, the depths unknown`, async () => {
        const s = await seedWorkspace(f.t);
        const healthy = await scrape(f);
        assert.equal(healthy.status, 200, healthy.body);
        assert.deepEqual(depths(healthy.body).sort(), ['rolodex_email_outbox_depth 0', 'rolodex_webhook_outbox_depth 0']);

        r.set(outage);
        try {
          const out = await scrape(f);
          assert.equal(out.status, 200, out.body);
          assert.ok(out.ms < PROMPT_MS, `answered after ${Math.round(out.ms)} ms`);
          assert.deepEqual(depths(out.body), [], 'no sample: unknown');
          assert.match(out.body, /^# TYPE rolodex_webhook_outbox_depth gauge$/m);
          assert.match(out.body, /^rolodex_http_requests_total\{/m, 'the other series are there');
          assert.match(out.body, /^rolodex_db_pool_connections 10$/m);
        } finally {
          r.set('relay');
        }
        assert.equal(await readsAgain(getter(f, s.secret)), 200, 'reads succeed again');
        const again = await scrape(f);
        assert.equal(again.status, 200, again.body);
        assert.deepEqual(depths(again.body).sort(), ['rolodex_email_outbox_depth 0', 'rolodex_webhook_outbox_depth 0']);
      });
    }
  });
}
