// The two speed goals of the agents' features (docs/mcp.md, docs/enrichment.md), each a ratio of
// two setups measured back to back in rounds (pairedRounds):
// - a `read_from_rolodex` tool call (POST /mcp, one JSON-RPC tools/call) against the same REST
//   GET of an account, on one server: at least 0.5;
// - account creates with ENRICHMENT=on-create against ENRICHMENT=manual, each on its own server
//   and database, every create carrying a website so that on-create plans a run: at least 0.9.
//   The website is a private address, so every run fails at once in the background: what is
//   measured is the cost of the runner recording the runs from the change log and executing them
//   beside the creates. Each on-create measurement is followed by the wait until its runner has
//   drained what it left, so that its background work never falls in the manual side's window;
//   each round prints the machine's load.
//   node bench/agents.ts [--dialect sqlite|postgres] [--workers 1] [--only mcp|create]
// BENCH_SECONDS, BENCH_ROUNDS and BENCH_CONNECTIONS apply as in bench/run.ts.
// BENCH_EAGER_ENV and BENCH_MANUAL_ENV (JSON objects) add variables to the on-create and the manual
// server's environment: BENCH_EAGER_ENV='{"ENRICHMENT":"manual"}' measures two servers that differ
// in nothing (the bench's own bias and noise), '{"ENRICH_MAX_DEFER_MS":"0"}' a runner that never
// waits for the load, and '{"NODE_OPTIONS":"--cpu-prof"}' on both profiles them side by side.
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { parseArgs } from 'node:util';
import type { Db, DialectName } from '../src/db/types.ts';
import { backends, cpuMs, family } from './proc-cpu.ts';
import { load, type Measurement, median, pairedRounds, seedContext, startServer, stop } from './run.ts';

const { values: args } = parseArgs({
  options: { dialect: { type: 'string', default: 'sqlite' }, workers: { type: 'string', default: '1' }, only: { type: 'string' } },
});
const dialect = args.dialect as DialectName;
const workers = Number(args.workers);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const VERSION = { 'service-version': '2026-03-01' };

/** The CPU a measurement cost per request, in µs: the server's processes, and on PostgreSQL the backends serving them. */
interface Cost {
  server: number[];
  pg: number[];
}

/** `measure`, and its CPU per request (load() warms up for a second first; docs/performance.md §Agents). */
async function withCpu(pid: number, cost: Cost, measure: () => Promise<Measurement>): Promise<Measurement> {
  const pids = family(pid);
  const pg = backends(pids);
  const before = new Map([...pids, ...pg].map((p) => [p, cpuMs(p)]));
  const m = await measure();
  const used = (ps: number[]) => ps.reduce((n, p) => n + cpuMs(p) - (before.get(p) ?? 0), 0);
  const requests = Math.max(1, m.rps * (SECONDS + 1));
  cost.server.push((used(family(pid)) * 1000) / requests);
  cost.pg.push((used(backends(family(pid))) * 1000) / requests);
  return m;
}

async function toolCall(): Promise<void> {
  const { tdb, ctx } = await seedContext(dialect);
  const server = await startServer(tdb, workers);
  try {
    const auth = { authorization: `Bearer ${ctx.secret}` };
    const created = await fetch(`${server.url}/v1/accounts`, {
      method: 'POST',
      headers: { ...auth, ...VERSION, 'content-type': 'application/json' },
      body: JSON.stringify({ fields: { $name: 'Bench account', $website: ['https://bench.example'] } }),
    });
    const id = ((await created.json()) as { id: string }).id;
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_from_rolodex', arguments: { path: `/v1/accounts/${id}` } } };
    const mcpHeaders = { ...auth, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const probe = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...mcpHeaders, 'content-type': 'application/json' },
      body: JSON.stringify(call),
    });
    const answer = (await probe.json()) as { result?: { isError?: boolean } };
    if (probe.status !== 200 || !answer.result || answer.result.isError) throw new Error(`the tool call failed: ${probe.status} ${JSON.stringify(answer)}`);
    const r = await pairedRounds(
      () => load(`${server.url}/v1/accounts/${id}`, { headers: { ...auth, ...VERSION } }),
      () => load(`${server.url}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify(call) }),
    );
    console.log(
      `read_from_rolodex vs GET /v1/accounts/{id} [${dialect}/${workers}]: ${Math.round(r.rps)} against ${r.referenceRps.join(', ')} req/s; ratio ${r.ratio.toFixed(2)} (rounds ${r.ratios.map((x) => x.toFixed(2)).join(', ')}); p50 ${r.p50} ms; non-2xx ${r.non2xx}, errors ${r.errors}`,
    );
  } finally {
    await stop(server.child);
    await tdb.drop();
  }
}

async function onCreate(): Promise<void> {
  const manual = await seedContext(dialect);
  const eager = await seedContext(dialect);
  const a = await startServer(manual.tdb, workers, { ENRICHMENT: 'manual', ...JSON.parse(process.env.BENCH_MANUAL_ENV ?? '{}') });
  const b = await startServer(eager.tdb, workers, { ENRICHMENT: 'on-create', ENRICH_POLL_MS: '100', ...JSON.parse(process.env.BENCH_EAGER_ENV ?? '{}') });
  try {
    const body = JSON.stringify({ fields: { $name: 'Bench account', $website: ['https://10.0.0.1'] } });
    const opts = (secret: string) => ({ method: 'POST', headers: { authorization: `Bearer ${secret}`, ...VERSION }, body });
    const costA: Cost = { server: [], pg: [] };
    const costB: Cost = { server: [], pg: [] };
    const totalBefore = [cpuMs(a.child.pid!), cpuMs(b.child.pid!)];
    const r = await pairedRounds(
      () => withCpu(a.child.pid!, costA, () => load(`${a.url}/v1/accounts`, opts(manual.ctx.secret))),
      async () => {
        const m = await withCpu(b.child.pid!, costB, () => load(`${b.url}/v1/accounts`, opts(eager.ctx.secret)));
        // The runs it queued still execute, before the next measurement of either side.
        await drained(eager.tdb.db);
        console.error(`  round: on-create ${Math.round(m.rps)} req/s, load ${loadavg()[0]!.toFixed(1)}`);
        return m;
      },
    );
    const total = [cpuMs(a.child.pid!) - totalBefore[0]!, cpuMs(b.child.pid!) - totalBefore[1]!];
    const runs = await eager.tdb.db.kysely
      .selectFrom('enrichment_runs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    console.log(
      `account creates, ENRICHMENT=on-create vs manual [${dialect}/${workers}]: ${Math.round(r.rps)} against ${r.referenceRps.join(', ')} req/s; ratio ${r.ratio.toFixed(2)} (rounds ${r.ratios.map((x) => x.toFixed(2)).join(', ')}); p50 ${r.p50} ms; runs queued ${Number(runs.n)}; non-2xx ${r.non2xx}, errors ${r.errors}`,
    );
    const accounts = await manual.tdb.db.kysely
      .selectFrom('records')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('kind', '=', 'account')
      .executeTakeFirstOrThrow();
    console.log(
      `  CPU per create while loaded, server: on-create ${Math.round(median(costB.server))} µs against ${Math.round(median(costA.server))} µs, ratio ${(median(costB.server) / median(costA.server)).toFixed(2)} (rounds ${costB.server.map((c, i) => (c / costA.server[i]!).toFixed(2)).join(', ')}); whole run with the runner's backlog: ${total[1]} against ${total[0]} ms of CPU for ${Number(runs.n)} and ${Number(accounts.n)} creates`,
    );
    if (dialect === 'postgres')
      console.log(
        `  CPU per create while loaded, PostgreSQL's backends: on-create ${Math.round(median(costB.pg))} µs against ${Math.round(median(costA.pg))} µs, ratio ${(median(costB.pg) / median(costA.pg)).toFixed(2)}`,
      );
  } finally {
    await stop(a.child);
    await stop(b.child);
    await manual.tdb.drop();
    await eager.tdb.drop();
  }
}

/** Resolves once the runners have read the whole change log and no run is in flight (at most a minute). */
async function drained(db: Db): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const left = await sql<{ n: number | string; behind: number | string | null }>`select
        (select count(*) from enrichment_runs where status in ('queued', 'running')) as n,
        (select max(seq) from events) - (select seq from enrichment_cursor) as behind`.execute(db.kysely);
    const row = left.rows[0]!;
    if (Number(row.n) === 0 && Number(row.behind ?? 0) <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

if (args.only !== 'create') await toolCall();
if (args.only !== 'mcp') await onCreate();
