// What the log says while /readyz fails because a dependency is silent (docs/reliability.md
// §Operational faults in the log, docs/deploy.md §Probes): each probe is answered 503 within
// READINESS_TIMEOUT_MS, and the log says so in one line without a stack for all of them, naming
// what did not answer. The silent database is a TCP server that accepts connections and never
// writes a byte; the silent blob store is one whose check never settles.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { type FaultApp, faultApp, silentServer } from '../helpers/faults.ts';

const READINESS_TIMEOUT_MS = 300;

/** Three probes, each answered 503; what the log said meanwhile, request lines aside. */
async function probe(t: TestApp) {
  const from = t.logs().length;
  for (let i = 0; i < 3; i++) {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().error.code, 'service_unavailable');
  }
  const text = t.logs().slice(from);
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { level: number; msg: string; code?: string; reason?: string })
    .filter((l) => l.msg !== 'request');
  assert.ok(!text.includes('"stack"'), 'a line carries a stack');
  return lines.map((l) => [l.level, l.msg, l.code, l.reason]);
}

for (const dialect of testDialects()) {
  describe(`readiness probes against a blob store that never answers [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, {
        env: { READINESS_TIMEOUT_MS: String(READINESS_TIMEOUT_MS) },
        deps: (deps) => {
          deps.blobs.ping = () => new Promise<void>(() => {});
        },
      });
    });
    after(() => t.close());

    test('one line without a stack, naming the blob store', async () => {
      assert.deepEqual(await probe(t), [
        [40, 'not ready; /readyz is answered 503 until it is', 'READINESS_TIMEOUT', `the blob store did not answer within ${READINESS_TIMEOUT_MS} ms`],
      ]);
    });
  });
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`readiness probes against a PostgreSQL that never answers [${dialect}]`, () => {
    let server: Awaited<ReturnType<typeof silentServer>>;
    let f: FaultApp;
    before(async () => {
      server = await silentServer();
      const port = server.port;
      f = await faultApp({
        env: { READINESS_TIMEOUT_MS: String(READINESS_TIMEOUT_MS), DATABASE_STATEMENT_TIMEOUT_MS: '1000' },
        databaseUrl: (url) => url.replace(/@[^/]+\//, `@127.0.0.1:${port}/`),
      });
    });
    after(async () => {
      // Refused from now on, so that the app's close does not wait out a connection attempt.
      const closed = server.close();
      await f.close();
      await closed;
    });

    test('one line without a stack, naming the database', async () => {
      assert.deepEqual(await probe(f.t), [
        [40, 'not ready; /readyz is answered 503 until it is', 'READINESS_TIMEOUT', `the database did not answer within ${READINESS_TIMEOUT_MS} ms`],
      ]);
    });
  });
}
