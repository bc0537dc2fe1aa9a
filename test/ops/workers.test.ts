// `rolodex serve --workers 2` as a real child process: both workers serve one port, the rate limit
// of a workspace holds across them, /metrics sums them, and SIGTERM stops the whole cluster.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createKey } from '../../src/auth/service.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { IN_CI, services, TEST_REDIS_URL } from '../helpers/services.ts';
import { freePort } from '../helpers/process.ts';
import { systemCtx, operatorCtx } from '../../src/lib/context.ts';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const LIMIT = 20;

const variants: Array<{ dialect: 'sqlite' | 'postgres'; redis: boolean }> = testDialects().map((dialect) => ({ dialect, redis: false }));
// With REDIS_URL the workers share the bucket through Redis instead of the primary.
if (services().redis || IN_CI) variants.push({ dialect: 'sqlite', redis: true });

for (const { dialect, redis } of variants) {
  describe(`serve --workers 2 [${dialect}${redis ? ' + redis' : ''}]`, () => {
    let tdb: TestDb;
    let child: ChildProcess;
    let output = '';
    let base = '';
    let secret = '';
    let workspaceId = '';

    before(async () => {
      tdb = await createTestDb(dialect);
      const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Cluster' });
      workspaceId = ws.id;
      secret = (await createKey(operatorCtx(tdb.db.kysely, ws.id), { userId: null, scopes: null, expiresInMs: null })).secret;
      // A port free when chosen may be taken by another test process before the cluster binds
      // it: start again on another one then.
      for (let attempt = 1; ; attempt++) {
        output = '';
        try {
          await startCluster(await freePort());
          break;
        } catch (err) {
          if (attempt >= 3 || !output.includes('EADDRINUSE')) throw err;
        }
      }
    });

    async function startCluster(port: number): Promise<void> {
      base = `http://127.0.0.1:${port}`;
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        DATA_DIR: tdb.dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        RATE_LIMIT_READ: String(LIMIT),
        RATE_LIMIT_WRITE: '0',
        RATE_LIMIT_SEARCH: '0',
        ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
        // A loaded machine may read Redis's answers late, but must not take Redis for gone: local
        // buckets per worker would let through more than the shared limit.
        ...(redis ? { REDIS_URL: TEST_REDIS_URL, REDIS_COMMAND_TIMEOUT_MS: '10000' } : {}),
      };
      child = spawn(process.execPath, [MAIN, 'serve', '--workers', '2'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (d) => (output += String(d)));
      child.stderr!.on('data', (d) => (output += String(d)));
      const deadline = Date.now() + 40_000; // generous: the whole suite shares 2 cores
      while (!output.includes('with 2 workers')) {
        if (child.exitCode !== null || Date.now() > deadline) {
          if (child.exitCode === null) child.kill('SIGKILL');
          throw new Error(`cluster did not start:\n${output}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    after(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
      await tdb?.drop();
    });

    const validate = () => fetch(`${base}/v1/auth/validate`, { headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' } });

    test('both workers serve, and the workspace limit holds across them', async () => {
      const n = LIMIT * 3;
      const started = Date.now();
      const results = await Promise.all(Array.from({ length: n }, () => validate().then(async (r) => (await r.arrayBuffer(), r.status))));
      const elapsed = (Date.now() - started) / 1000;
      const accepted = results.filter((s) => s === 200).length;
      assert.equal(accepted + results.filter((s) => s === 429).length, n, `only 200 and 429: ${results.join(',')}`);
      // The burst, plus what the bucket refilled while the requests were arriving.
      assert.ok(accepted >= LIMIT, `accepted ${accepted} < ${LIMIT}`);
      assert.ok(accepted <= LIMIT + Math.ceil(elapsed * LIMIT) + 1, `accepted ${accepted} of ${n} in ${elapsed}s with limit ${LIMIT}/s`);
      await new Promise((r) => setTimeout(r, 100));
      const pids = new Set([...output.matchAll(/"pid":(\d+)[^\n]*"op":"validateCredential"/g)].map((m) => m[1]));
      assert.equal(pids.size, 2, 'requests were served by both workers');
      const metrics = await (await fetch(`${base}/metrics`)).text();
      const count = (status: number) =>
        Number(new RegExp(`rolodex_http_requests_total\\{operation="validateCredential",method="GET",status="${status}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
      assert.equal(count(200) + count(429), n, 'metrics are summed over the workers');
      assert.equal(count(200), accepted);
      if (redis) {
        assert.match(metrics, /^rolodex_rate_limit_redis_up 1$/m, 'Redis was reachable');
        // Decided on Redis: the workspace's bucket is there. (An answer read after its
        // adaptive deadline is decided on the level Redis last reported and counted as a fallback,
        // so the fallback counter alone cannot say this on a busy machine.)
        const client = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
        try {
          await client.connect();
          const tokens = await client.hget(`rolodex:rl:${workspaceId}:Read`, 'tokens');
          assert.notEqual(tokens, null, 'the workspace has a bucket on Redis');
        } finally {
          client.disconnect();
        }
      }
    });

    test('health checks answer, and SIGTERM stops every worker', async () => {
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      assert.equal(code, 0, output.slice(-2000));
      assert.match(output, /all workers stopped/);
      await assert.rejects(fetch(`${base}/healthz`), 'nothing listens any more');
    });
  });
}
