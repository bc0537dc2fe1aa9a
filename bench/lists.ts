// Lists at scale (issue 3): import of 100,000 contacts through the CLI, a list of 100,000 members
// built through the API, page latency at offset 0 and 99,975 (median over HTTP, keep-alive) next
// to a 25-member list (totalCount must cost the same), and GET /v1/lists/{id} requests per second
// as a share of the bare Fastify baseline (bench/baseline.ts), paired in rounds by bench/run.ts's
// pairedRounds like every ratio of the benchmarks. Deep pages at every offset: bench/pages.ts.
//   node bench/lists.ts [--dialect sqlite|postgres|both] [--members 100000] [--seconds 10] [--rounds 3]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKey } from '../src/auth/service.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { systemCtx, operatorCtx } from '../src/lib/context.ts';
import { load, median, pairedRounds, startBaseline, startServer, stop } from './run.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    members: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
  },
});
const MEMBERS = Number(args.members);
const SECONDS = Number(args.seconds);
const ROOT = new URL('..', import.meta.url).pathname;
const H = { 'service-version': '2026-03-01' };

async function latency(url: string, secret: string, n = 400): Promise<{ median: number; p95: number; total: number }> {
  const times: number[] = [];
  let total = -1;
  for (let i = 0; i < n + 20; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { ...H, authorization: `Bearer ${secret}` } });
    const body = (await res.json()) as { totalCount: number; data: unknown[] };
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    if (i >= 20) times.push(performance.now() - t0); // the first 20 warm up
    total = body.totalCount;
  }
  const s = [...times].sort((a, b) => a - b);
  return { median: median(times), p95: s[Math.floor(s.length * 0.95)] as number, total };
}

async function run(dialect: 'sqlite' | 'postgres'): Promise<Record<string, unknown>> {
  const tdb = await createTestDb(dialect);
  const { db, dataDir } = tdb;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_READ: '0',
    RATE_LIMIT_WRITE: '0',
    RATE_LIMIT_SEARCH: '0',
    PORT: '0',
    WORKERS: '1',
    ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
  };
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let baseline: Awaited<ReturnType<typeof startBaseline>> | undefined;
  try {
    const ws = await createWorkspace(systemCtx(db.kysely), { name: 'bench' });
    const key = await createKey(operatorCtx(db.kysely, ws.id), { userId: null, scopes: null, expiresInMs: null });
    const auth = { ...H, authorization: `Bearer ${key.secret}` };

    // 1. Import MEMBERS contacts (plus their owner) through the real CLI.
    const file = join(dataDir, 'contacts.ndjson');
    const lines = [
      JSON.stringify({ object: 'user', externalId: 'owner', email: 'owner@bench.test', name: 'Owner' }),
      JSON.stringify({ object: 'account', externalId: 'acme', fields: { $name: { value: 'Acme' } }, relationships: { $owner: { values: ['owner'] } } }),
    ];
    for (let i = 0; i < MEMBERS; i++) {
      lines.push(
        JSON.stringify({
          object: 'contact',
          externalId: `c${i}`,
          fields: {
            $name: { value: { firstName: `First${i}`, lastName: 'Last' }, valueType: 'FULL_NAME' },
            $email: { value: [`c${i}@bench.test`], valueType: 'EMAIL' },
          },
          relationships: { $account: { objectType: 'account', values: ['acme'] } },
        }),
      );
    }
    writeFileSync(file, lines.join('\n'));
    const t0 = performance.now();
    const imp = spawn(process.execPath, ['src/cli/main.ts', 'import', '--workspace', ws.id, file, '--json'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    imp.stdout.on('data', (d) => (out += String(d)));
    const code = await new Promise((r) => imp.once('exit', r));
    const importSeconds = (performance.now() - t0) / 1000;
    if (code !== 0) throw new Error(`import failed (${String(code)})`);
    const ids = Object.values((JSON.parse(out) as { ids: { contact: Record<string, string> } }).ids.contact);

    // 2. A list of MEMBERS contacts, built through the API 1,000 ids per request.
    const srv = await startServer(tdb, 1);
    server = srv;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(srv.url + path, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await res.json()) as { id: string };
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const t1 = performance.now();
    const big = await post('/v1/lists', { fields: { $name: 'big', $objectType: 'contact' }, relationships: { $contacts: ids.slice(0, 1000) } });
    for (let i = 1000; i < ids.length; i += 1000) await post(`/v1/lists/${big.id}`, { relationships: { $contacts: { add: ids.slice(i, i + 1000) } } });
    const buildSeconds = (performance.now() - t1) / 1000;
    const small = await post('/v1/lists', { fields: { $name: 'small', $objectType: 'contact' }, relationships: { $contacts: ids.slice(0, 25) } });

    // 3. Page latency, one request at a time over keep-alive.
    const pages = {
      bigOffset0: await latency(`${srv.url}/v1/lists/${big.id}/contacts?offset=0`, key.secret),
      bigOffsetEnd: await latency(`${srv.url}/v1/lists/${big.id}/contacts?offset=${ids.length - 25}`, key.secret),
      bigOffsetMiddle: await latency(`${srv.url}/v1/lists/${big.id}/contacts?offset=${Math.floor(ids.length / 2)}`, key.secret, 100),
      smallOffset0: await latency(`${srv.url}/v1/lists/${small.id}/contacts?offset=0`, key.secret),
    };

    // 4. Throughput of GET /v1/lists/{id} as a share of the bare Fastify baseline.
    baseline = await startBaseline();
    const hello = baseline.url;
    const list = await pairedRounds(
      () => load(hello, { seconds: SECONDS }),
      () => load(`${srv.url}/v1/lists/${big.id}`, { headers: auth, seconds: SECONDS }),
      Number(args.rounds),
    );
    if (list.non2xx > 0 || list.errors > 0) throw new Error(`GET /v1/lists/{id}: ${list.non2xx} non-2xx, ${list.errors} errors`);
    const helloRps = median(list.references.map((r) => r.rps));
    return { dialect, members: ids.length, importSeconds, buildSeconds, pages, listRps: list.rps, helloRps, ratio: list.ratio };
  } finally {
    if (server) await stop(server.child);
    if (baseline) await stop(baseline.child);
    await tdb.drop();
  }
}
const fmt = (x: number) => x.toFixed(2);
for (const dialect of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as 'sqlite' | 'postgres']) {
  const r = (await run(dialect)) as any;
  const line = (name: string, p: { median: number; p95: number; total: number }) =>
    `  ${name.padEnd(34)} median ${fmt(p.median)} ms   p95 ${fmt(p.p95)} ms   totalCount ${p.total}`;
  process.stdout.write(
    [
      `== ${dialect}: ${r.members} contacts`,
      `  import (CLI, incl. process start)   ${fmt(r.importSeconds)} s   (target ≤ 30 s on SQLite)`,
      `  build the list via API (1,000/req)  ${fmt(r.buildSeconds)} s`,
      line('page offset 0 (big list)', r.pages.bigOffset0),
      line(`page offset ${r.members - 25} (big list)`, r.pages.bigOffsetEnd),
      line(`page offset ${Math.floor(r.members / 2)} (big list)`, r.pages.bigOffsetMiddle),
      line('page offset 0 (25-member list)', r.pages.smallOffset0),
      `  big/small offset-0 latency ratio     ${fmt(r.pages.bigOffset0.median / r.pages.smallOffset0.median)} (flat totalCount ⇒ ≈ 1)`,
      `  GET /v1/lists/{id}                  ${Math.round(r.listRps)} req/s`,
      `  bare Fastify hello-world            ${Math.round(r.helloRps)} req/s (bench/baseline.ts)`,
      `  ratio                               ${fmt(r.ratio)} of bare Fastify (median of ${args.rounds} paired rounds)`,
      '',
    ].join('\n'),
  );
}
