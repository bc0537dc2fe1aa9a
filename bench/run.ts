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
// write the results to this file), BENCH_CLIENT (autocannon, the default, or wrk: bench/wrk.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannonModule from 'autocannon';
import { sql } from 'kysely';
import { createKey } from '../src/auth/service.ts';
import type { DialectName } from '../src/db/types.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createUser } from '../src/users/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { probeServices } from '../test/helpers/services.ts';
import { type BenchContext, type BenchRoute, ROUTES } from './routes.ts';
import { wrkLoad } from './wrk.ts';
import { freePort } from '../test/helpers/process.ts';
import { systemCtx, operatorCtx } from '../src/lib/context.ts';

const autocannon = autocannonModule;
export const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const BASELINE = fileURLToPath(new URL('./baseline.ts', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CLIENT = process.env.BENCH_CLIENT ?? 'autocannon';
if (CLIENT !== 'autocannon' && CLIENT !== 'wrk') throw new Error(`BENCH_CLIENT=${CLIENT}: autocannon or wrk`);

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

async function waitFor(url: string, child: ChildProcess, log: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
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

/** A child process, ready once `ready` answers (within `timeoutMs`: a loaded machine starts slowly). */
export async function start(args: string[], env: Record<string, string>, ready: string, timeoutMs?: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  await waitFor(ready, child, () => err, timeoutMs);
  return child;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

export type Measurement = Omit<Result, 'setup' | 'route' | 'ratio'>;

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/**
 * One request after another over keep-alive: the median and p95 of `requests` GETs of `url`, after
 * 20 that warm up; `check` sees the first answer's body (a page's shape, its totalCount).
 */
export async function latency(
  url: string,
  headers: Record<string, string>,
  requests: number,
  check?: (body: any) => void,
): Promise<{ median: number; p95: number; times: number[] }> {
  const times: number[] = [];
  for (let i = 0; i < requests + 20; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.json();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    if (i === 0) check?.(body);
    if (i >= 20) times.push(ms);
  }
  const sorted = [...times].sort((a, b) => a - b);
  return { median: median(times), p95: sorted[Math.floor(sorted.length * 0.95)] as number, times };
}

export interface LoadOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  seconds?: number;
  /** Paths the requests take in turn, each connection's next request the next path (`url` gives the host). */
  paths?: string[];
  /** When given, the i-th request's body (writes that must differ from the one before, or they change nothing). */
  bodyOf?: (i: number) => string;
}

/** One measurement of `url` (autocannon, or wrk under BENCH_CLIENT=wrk), after a one-second warm-up (JIT, caches, pool connections). */
export async function load(url: string, o: LoadOptions = {}): Promise<Measurement> {
  const headers = { ...o.headers };
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  if (CLIENT === 'wrk' && o.bodyOf) throw new Error('BENCH_CLIENT=wrk sends one body: this route needs autocannon');
  if (CLIENT === 'wrk') return wrkLoad(url, { ...o, headers }, o.seconds ?? SECONDS, o.connections ?? CONNECTIONS);
  const { paths, bodyOf } = o;
  if (bodyOf) headers['content-type'] = 'application/json';
  let next = 0;
  const setup = (req: { path?: string }) => {
    const i = next++;
    return { ...req, ...(paths ? { path: paths[i % paths.length] } : {}), ...(bodyOf ? { body: bodyOf(i) } : {}) };
  };
  const rotate = paths || bodyOf ? { requests: [{ setupRequest: setup }] } : {};
  const opts = {
    url,
    method: o.method ?? 'GET',
    headers,
    ...(o.body !== undefined ? { body: o.body } : {}),
    connections: o.connections ?? CONNECTIONS,
    ...rotate,
  };
  await autocannon({ ...opts, duration: 1 });
  const r = await autocannon({ ...opts, duration: o.seconds ?? SECONDS });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

export interface Paired extends Measurement {
  /** Median over the rounds of subject/reference throughput, each pair measured back to back. */
  ratio: number;
  ratios: number[];
  referenceRps: number[];
  references: Measurement[];
}

/**
 * Measures `subject` in `rounds` rounds, `reference` (a baseline, or the same setup with a feature
 * off) right before it in each round. The machine's speed drifts by tens of percent within
 * minutes; a pair measured back to back drifts together, so the ratio is taken per round and its
 * median reported, with the medians of the subject's own figures. Every other round measures the
 * subject first, so that neither side always runs second.
 */
export async function pairedRounds(reference: () => Promise<Measurement>, subject: () => Promise<Measurement>, rounds = ROUNDS): Promise<Paired> {
  const pairs: { base: Measurement; m: Measurement }[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      const base = await reference();
      pairs.push({ base, m: await subject() });
    } else {
      const m = await subject();
      pairs.push({ base: await reference(), m });
    }
  }
  const ms = pairs.map((p) => p.m);
  const ratios = pairs.map((p) => p.m.rps / p.base.rps);
  return {
    rps: median(ms.map((m) => m.rps)),
    p50: median(ms.map((m) => m.p50)),
    p99: median(ms.map((m) => m.p99)),
    non2xx: ms.reduce((n, m) => n + m.non2xx, 0),
    errors: ms.reduce((n, m) => n + m.errors, 0),
    ratio: median(ratios),
    ratios,
    referenceRps: pairs.map((p) => Math.round(p.base.rps)),
    references: pairs.map((p) => p.base),
  };
}

/**
 * Options of the baseline to pair with `route`: a route whose requests take paths in turn costs
 * the client more per request (autocannon builds each request instead of reusing one: 0.71–0.74 of
 * the plain baseline's rate on this machine), so its baseline takes as many paths in turn too,
 * the same paths as a query string the hello-world route ignores.
 */
export function baselineFor(route: BenchRoute, ctx: BenchContext): LoadOptions {
  if (route.paths) return { paths: route.paths(ctx).map((p) => `/?${p}`) };
  return route.bodies ? { paths: ['/?a', '/?b'] } : {};
}

/** The paths and bodies a route's requests take in turn, if any. */
export function routeRotation(route: BenchRoute, ctx: BenchContext): Pick<LoadOptions, 'paths' | 'bodyOf'> {
  const bodies = route.bodies?.(ctx);
  return { ...(route.paths ? { paths: route.paths(ctx) } : {}), ...(bodies ? { bodyOf: (i: number) => JSON.stringify(bodies(i)) } : {}) };
}

/** The bare Fastify baseline (bench/baseline.ts) in its own process. */
export async function startBaseline(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  return { child: await start([BASELINE], { PORT: String(port) }, url), url };
}

/** One load of `route` on the server at `url`, with the headers and bodies it takes. */
export async function measure(url: string, route: BenchRoute, ctx: BenchContext): Promise<Measurement> {
  const headers: Record<string, string> = { authorization: `Bearer ${ctx.secret}`, 'service-version': '2026-03-01', ...route.headers };
  const body = route.body ? JSON.stringify(route.body(ctx)) : undefined;
  return load(url, { method: route.method, headers, ...(body !== undefined ? { body } : {}), ...routeRotation(route, ctx) });
}

let vacuumChecked = false;

export async function seedContext(dialect: DialectName) {
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  if (dialect === 'postgres' && !vacuumChecked) {
    vacuumChecked = true;
    // A test server may run without it; its dead rows and statistics then date from the seeding,
    // and creates may slow down round after round (docs/performance.md §Creates side by side),
    // which a figure has to say. bench/dialects.ts refreshes them between rounds instead.
    const { rows } = await sql<{ autovacuum: string }>`show autovacuum`.execute(db);
    if (rows[0]?.autovacuum !== 'on')
      console.error('PostgreSQL runs with autovacuum off: its dead rows and statistics date from the seeding, and create figures may drift down');
  }
  const ws = await createWorkspace(systemCtx(db), { name: 'Bench' });
  const user = await createUser(operatorCtx(db, ws.id), { email: 'bench@example.test', role: 'admin' });
  const key = await createKey(operatorCtx(db, ws.id), { userId: user.id, scopes: null, expiresInMs: null });
  const ctx: BenchContext = { db: tdb.db, workspaceId: ws.id, userId: user.id, secret: key.secret, state: {} };
  return { tdb, ctx };
}

/**
 * `rolodex serve` (`main`: another checkout's src/cli/main.ts, to compare) on a seeded test
 * database with `workers` workers and rate limits off unless `extra` sets them; `url` is its origin.
 */
export async function startServer(
  tdb: { dataDir: string; databaseUrl?: string | undefined },
  workers: number,
  extra: Record<string, string> = {},
  main = MAIN,
  timeoutMs?: number,
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: tdb.dataDir,
    LOG_LEVEL: 'warn',
    WORKERS: String(workers),
    RATE_LIMIT_READ: '0',
    RATE_LIMIT_WRITE: '0',
    RATE_LIMIT_SEARCH: '0',
    ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
    ...extra,
  };
  const url = `http://127.0.0.1:${port}`;
  return { child: await start([main, 'serve'], env, `${url}/healthz`, timeoutMs), url };
}

async function main(): Promise<void> {
  const wanted = process.env.BENCH_ROUTES?.split('|');
  let routes = ROUTES.filter((r) => !wanted || wanted.some((w) => r.name.includes(w)));
  // wrk sends one body: a route whose requests take bodies in turn needs autocannon.
  const rotating = CLIENT === 'wrk' ? routes.filter((r) => r.bodies !== undefined) : [];
  if (rotating.length > 0) {
    console.error(`wrk sends one body, so these routes need autocannon and are skipped: ${rotating.map((r) => `'${r.name}'`).join(', ')}`);
    routes = routes.filter((r) => !rotating.includes(r));
  }
  const pg = (await probeServices()).postgres;
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
  console.error(`${SECONDS}s per measurement, ${CONNECTIONS} connections, ${CLIENT}, on ${process.platform} with Node ${process.version}`);
  if (CLIENT === 'autocannon' && availableParallelism() <= 2 && setups.some((s) => s.workers > 1))
    console.error(
      'autocannon shares these cores with the workers; BENCH_CLIENT=wrk takes half its CPU per request (docs/performance.md §How figures are measured)',
    );

  const results: Result[] = [];
  const baselines: Measurement[] = [];
  // The baseline server stays up, idle while routes are measured.
  const baseline = await startBaseline();
  const rounds = async (url: string, route: BenchRoute, ctx: BenchContext) => {
    const reference = baselineFor(route, ctx);
    const p = await pairedRounds(
      () => load(baseline.url, reference),
      () => measure(url, route, ctx),
    );
    // The median baseline printed is the plain one's.
    if (!route.paths) baselines.push(...p.references);
    return p;
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
        const { child: server, url: serverUrl } = await startServer(tdb, setup.workers);
        try {
          for (const r of routes) {
            const { referenceRps, references: _r, ratios: _q, ...m } = await rounds(serverUrl + r.path(ctx), r, ctx);
            results.push({ setup: name, route: r.name, ...m });
            console.error(`${name}: ${r.name}: ${Math.round(m.rps)} req/s, ${(m.ratio * 100).toFixed(0)}% of baseline (baselines ${referenceRps.join(', ')})`);
          }
        } finally {
          await stop(server);
        }
      } finally {
        await tdb.drop();
      }
    }
  } finally {
    await stop(baseline.child);
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
