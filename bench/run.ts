// `npm run bench`: one run that measures a bare Fastify hello-world (the baseline) and every route
// of bench/routes.ts on SQLite and PostgreSQL, single process and with workers, each server a
// child process on this machine with rate limits off. Prints requests/s, p50, p99 and each route's
// throughput as a share of the baseline.
//
// The speed of a small shared machine drifts by tens of percent within minutes, so a baseline
// measured once at the start would skew every later ratio. Each route is measured in rounds, a
// baseline measurement right before each round's route measurement; a route's figures are the
// medians over its rounds, and its ratio is the median of the rounds' route/baseline ratios.
//
// Environment: BENCH_SECONDS (per measurement, default 5), BENCH_ROUNDS (default 3),
// BENCH_CONNECTIONS (default 50), BENCH_WORKERS (the "with workers" setups, default 2),
// BENCH_SETUPS (e.g. "sqlite/1,postgres/2"), BENCH_ROUTES (substring filter; `a|b` for several), BENCH_JSON (also
// write the results to this file).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannonModule from 'autocannon';
import { sql } from 'kysely';
import { createKey } from '../src/auth/service.ts';
import type { DialectName } from '../src/db/types.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createUser } from '../src/users/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { services } from '../test/helpers/services.ts';
import { type BenchContext, type BenchRoute, ROUTES } from './routes.ts';
import { freePort } from '../test/helpers/process.ts';
import { systemCtx, operatorCtx } from '../src/lib/context.ts';

const autocannon = autocannonModule;
export const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const BASELINE = fileURLToPath(new URL('./baseline.ts', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Result {
  setup: string;
  route: string;
  rps: number;
  p50: number;
  p99: number;
  ratio: number;
  non2xx: number;
  errors: number;
}

async function waitFor(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited:\n${log()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function start(args: string[], env: Record<string, string>, ready: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  await waitFor(ready, child, () => err);
  return child;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

type Measurement = Omit<Result, 'setup' | 'route' | 'ratio'>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function measure(url: string, route?: BenchRoute, ctx?: BenchContext): Promise<Measurement> {
  const headers: Record<string, string> = ctx ? { authorization: `Bearer ${ctx.secret}`, 'service-version': '2026-03-01', ...route?.headers } : {};
  const body = route?.body && ctx ? JSON.stringify(route.body(ctx)) : undefined;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const opts = { url, method: route?.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}), connections: CONNECTIONS };
  await autocannon({ ...opts, duration: 1 }); // warm-up: JIT, caches, pool connections
  const r = await autocannon({ ...opts, duration: SECONDS });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

export async function seedContext(dialect: DialectName) {
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  const ws = await createWorkspace(systemCtx(db), { name: 'Bench' });
  const user = await createUser(operatorCtx(db, ws.id), { email: 'bench@example.test', role: 'admin' });
  const key = await createKey(operatorCtx(db, ws.id), { userId: user.id, scopes: null, expiresInMs: null });
  const ctx: BenchContext = { db: tdb.db, workspaceId: ws.id, userId: user.id, secret: key.secret, state: {} };
  return { tdb, ctx };
}

async function main(): Promise<void> {
  const wanted = process.env.BENCH_ROUTES?.split('|');
  const routes = ROUTES.filter((r) => !wanted || wanted.some((w) => r.name.includes(w)));
  const pg = (await services()).postgres;
  let setups = [
    { dialect: 'sqlite' as DialectName, workers: 1 },
    { dialect: 'sqlite' as DialectName, workers: WORKERS },
    { dialect: 'postgres' as DialectName, workers: 1 },
    { dialect: 'postgres' as DialectName, workers: WORKERS },
  ];
  if (process.env.BENCH_SETUPS) setups = setups.filter((s) => process.env.BENCH_SETUPS!.split(',').includes(`${s.dialect}/${s.workers}`));
  if (!pg) {
    console.error('PostgreSQL not reachable: its setups are skipped');
    setups = setups.filter((s) => s.dialect !== 'postgres');
  }
  console.error(`${SECONDS}s per measurement, ${CONNECTIONS} connections, on ${process.platform} with Node ${process.version}`);

  const results: Result[] = [];
  const baselines: Measurement[] = [];
  const port = await freePort();
  // The baseline server stays up, idle while routes are measured.
  const baselineServer = await start([BASELINE], { PORT: String(port) }, `http://127.0.0.1:${port}/`);
  const rounds = async (url: string, route: BenchRoute, ctx: BenchContext) => {
    const pairs: { base: Measurement; m: Measurement }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const base = await measure(`http://127.0.0.1:${port}/`);
      baselines.push(base);
      pairs.push({ base, m: await measure(url, route, ctx) });
    }
    const ms = pairs.map((p) => p.m);
    return {
      rps: median(ms.map((m) => m.rps)),
      p50: median(ms.map((m) => m.p50)),
      p99: median(ms.map((m) => m.p99)),
      non2xx: ms.reduce((n, m) => n + m.non2xx, 0),
      errors: ms.reduce((n, m) => n + m.errors, 0),
      ratio: median(pairs.map((p) => p.m.rps / p.base.rps)),
      baseRps: pairs.map((p) => Math.round(p.base.rps)),
    };
  };

  try {
    for (const setup of setups) {
      const name = `${setup.dialect}, ${setup.workers} worker${setup.workers > 1 ? 's' : ''}`;
      const { tdb, ctx } = await seedContext(setup.dialect);
      try {
        for (const r of routes) await r.seed?.(ctx);
        // A long-lived database has planner statistics (and, on PostgreSQL, a visibility map for
        // index-only scans); freshly bulk-loaded tables have neither until these run.
        await sql.raw(setup.dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(tdb.db.kysely);
        const p = await freePort();
        const env: Record<string, string> = {
          PORT: String(p),
          HOST: '127.0.0.1',
          DATA_DIR: tdb.dataDir,
          LOG_LEVEL: 'warn',
          WORKERS: String(setup.workers),
          RATE_LIMIT_READ: '0',
          RATE_LIMIT_WRITE: '0',
          RATE_LIMIT_SEARCH: '0',
        };
        if (tdb.databaseUrl) env.DATABASE_URL = tdb.databaseUrl;
        const server = await start([MAIN, 'serve'], env, `http://127.0.0.1:${p}/healthz`);
        try {
          for (const r of routes) {
            const { baseRps, ...m } = await rounds(`http://127.0.0.1:${p}${r.path(ctx)}`, r, ctx);
            results.push({ setup: name, route: r.name, ...m });
            console.error(`${name}: ${r.name}: ${Math.round(m.rps)} req/s, ${(m.ratio * 100).toFixed(0)}% of baseline (baselines ${baseRps.join(', ')})`);
          }
        } finally {
          await stop(server);
        }
      } finally {
        await tdb.drop();
      }
    }
  } finally {
    await stop(baselineServer);
  }
  const base = { rps: median(baselines.map((b) => b.rps)), p50: median(baselines.map((b) => b.p50)), p99: median(baselines.map((b) => b.p99)) };
  results.unshift({ setup: 'fastify', route: 'hello world (baseline, median)', ...base, non2xx: 0, errors: 0, ratio: 1 });
  const rows = results.map((r) => [
    r.setup,
    r.route,
    Math.round(r.rps).toString(),
    `${r.p50} ms`,
    `${r.p99} ms`,
    `${(r.ratio * 100).toFixed(0)}%`,
    r.non2xx || r.errors ? `${r.non2xx} non-2xx, ${r.errors} errors` : '',
  ]);
  const head = ['setup', 'route', 'req/s', 'p50', 'p99', 'of baseline', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  console.log(line(head));
  for (const row of rows) console.log(line(row));
  if (process.env.BENCH_JSON)
    writeFileSync(process.env.BENCH_JSON, JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, results }, null, 2));
  if (results.some((r) => r.non2xx > 0 || r.errors > 0)) process.exitCode = 1;
}

if (import.meta.main) await main();
