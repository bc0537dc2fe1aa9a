// `node bench/mixed.ts`: mixed traffic against one server process per setup (issue 15, goal 3).
// BENCH_CONNECTIONS (default 50) keep-alive connections each send one request after another for
// BENCH_SECONDS (default 10), every request drawn at random: 80% point reads (GET /v1/lists/{id}),
// 15% member pages in the middle half of a 100,000-member list (offsets 25,000 to 75,000), 5%
// writes (POST /v1/lists). Prints requests/s and p50/p99 per route, after a warm-up second.
//
// That closed loop runs at saturation, where p50 is about CONNECTIONS / throughput whatever the
// code does (Little's law): it measures capacity, not waiting. So each setup then runs open loops
// at BENCH_RATES (default "0.5,0.8") of the rate it just measured: connection c sends its k-th
// request at start + (k × CONNECTIONS + c) / rate and a latency counts from that scheduled time,
// so time spent queued behind slower requests (in the server or waiting for the connection)
// counts too (docs/performance.md §Mixed load).
// Environment as bench/run.ts: BENCH_SETUPS (e.g. "sqlite/1,postgres/1"), BENCH_WORKERS,
// BENCH_LIST_MEMBERS; load average is printed before and after.
// BENCH_MIX="0.8,0.15,0.05" sets the three shares (for example "1,0,0": point reads alone, to
// tell a tail the pages cause from the machine's own); BENCH_SERVER_NODE_OPTIONS is passed to the
// server as NODE_OPTIONS (a V8 flag tried on the server alone).
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/types.ts';
import { probeServices } from '../test/helpers/services.ts';
import { seedContext, startServer, stop } from './run.ts';
import { seedBigList, seedList } from './seeds.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const MIX = (process.env.BENCH_MIX ?? '0.8,0.15,0.05').split(',').map(Number);
if (MIX.length !== 3 || MIX.some((x) => !(x >= 0)) || Math.abs(MIX[0]! + MIX[1]! + MIX[2]! - 1) > 1e-9) {
  throw new Error(`BENCH_MIX: three shares that add up to 1, not ${process.env.BENCH_MIX}`);
}
const SERVER_ENV: Record<string, string> = process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {};
const RATES = (process.env.BENCH_RATES ?? '0.5,0.8').split(',').filter(Boolean).map(Number);

interface Route {
  name: string;
  share: number;
  method: 'GET' | 'POST';
  path(): string;
  body?: string;
}

function send(agent: Agent, port: number, headers: Record<string, string>, r: Route): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port, method: r.method, path: r.path(), headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

const pct = (xs: number[], p: number) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]! : NaN);

/** Closed loop without `rate` (each connection sends when its last answer came); open loop at `rate` requests/s with it. */
async function drive(port: number, secret: string, routes: Route[], seconds: number, rate?: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies = new Map<string, number[]>(routes.map((r) => [r.name, []]));
  let failures = 0;
  const until = performance.now() + seconds * 1000;
  const pick = () => {
    let x = Math.random();
    for (const r of routes) if ((x -= r.share) < 0) return r;
    return routes[0]!;
  };
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, c) => {
      for (let k = 0; ; k++) {
        let t0 = performance.now();
        if (rate) {
          const due = start + ((k * CONNECTIONS + c) / rate) * 1000;
          if (due >= until) break;
          if (due > t0) await new Promise((resolve) => setTimeout(resolve, due - t0));
          t0 = due;
        } else if (t0 >= until) break;
        const r = pick();
        const headers: Record<string, string> = { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' };
        if (r.body) headers['content-type'] = 'application/json';
        const status = await send(agent, port, headers, r);
        if (status !== 200) failures++;
        latencies.get(r.name)!.push(performance.now() - t0);
      }
    }),
  );
  agent.destroy();
  return { latencies, failures };
}

/** Prints one run; returns its requests/s. */
function report(title: string, run: { latencies: Map<string, number[]>; failures: number }): number {
  const all = [...run.latencies.values()].flat().sort((a, b) => a - b);
  const rate = Math.round(all.length / SECONDS);
  console.log(
    `${title}: ${rate} req/s, p50 ${pct(all, 50).toFixed(1)} ms, p99 ${pct(all, 99).toFixed(1)} ms${run.failures ? `, ${run.failures} failed` : ''} (load ${loadavg()[0]!.toFixed(2)})`,
  );
  for (const [name, xs] of run.latencies) {
    xs.sort((a, b) => a - b);
    const [p50, p99] = [pct(xs, 50), pct(xs, 99)];
    console.log(
      `  ${name.padEnd(26)} ${String(xs.length).padStart(7)} requests  p50 ${p50.toFixed(1).padStart(7)} ms  p99 ${p99.toFixed(1).padStart(7)} ms  p99/p50 ${(p99 / p50).toFixed(1)}`,
    );
  }
  return rate;
}

async function main(): Promise<void> {
  const pg = (await probeServices()).postgres;
  let setups: { dialect: DialectName; workers: number }[] = [
    { dialect: 'sqlite', workers: 1 },
    { dialect: 'postgres', workers: 1 },
    { dialect: 'sqlite', workers: WORKERS },
    { dialect: 'postgres', workers: WORKERS },
  ];
  if (process.env.BENCH_SETUPS) setups = setups.filter((s) => process.env.BENCH_SETUPS!.split(',').includes(`${s.dialect}/${s.workers}`));
  if (!pg) setups = setups.filter((s) => s.dialect !== 'postgres');
  console.log(
    `${SECONDS}s per setup, ${CONNECTIONS} connections; load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const setup of setups) {
    const { tdb, ctx } = await seedContext(setup.dialect);
    try {
      await seedList(ctx);
      await seedBigList(ctx);
      await sql.raw(setup.dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(tdb.db.kysely);
      const members = Number(ctx.state.bigListMembers);
      const routes: Route[] = [
        { name: 'GET /v1/lists/{id}', share: MIX[0]!, method: 'GET', path: () => `/v1/lists/${String(ctx.state.listId)}` },
        {
          name: 'member page, middle half',
          share: MIX[1]!,
          method: 'GET',
          path: () => `/v1/lists/${String(ctx.state.bigListId)}/contacts?limit=25&offset=${Math.floor(members / 4 + (Math.random() * members) / 2)}`,
        },
        {
          name: 'POST /v1/lists',
          share: MIX[2]!,
          method: 'POST',
          path: () => '/v1/lists',
          body: JSON.stringify({ fields: { $name: 'Mixed', $objectType: 'account' } }),
        },
      ];
      const server = await startServer(tdb, setup.workers, SERVER_ENV);
      const port = Number(new URL(server.url).port);
      try {
        await drive(port, ctx.secret, routes, 1);
        const saturated = report(`\n${setup.dialect}, ${setup.workers} worker(s), closed loop`, await drive(port, ctx.secret, routes, SECONDS));
        for (const f of RATES) {
          const rate = Math.max(1, Math.round(saturated * f));
          report(
            `${setup.dialect}, ${setup.workers} worker(s), open loop at ${f} × ${saturated} = ${rate} req/s offered`,
            await drive(port, ctx.secret, routes, SECONDS, rate),
          );
        }
      } finally {
        await stop(server.child);
      }
    } finally {
      await tdb.drop();
    }
  }
  console.log(
    `\nload average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

if (import.meta.main) await main();
