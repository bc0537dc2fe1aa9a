// `node bench/slow-scan.ts`: point reads while heavy filtered listings run (docs/performance.md
// §Slow scans beside point reads). On BENCH_CONTACTS contacts (default 100,000), a stream of
// GET /v1/contacts/{id} of random contacts at BENCH_RATE requests/s (default 100, an open loop: a
// request's latency counts from the time it was due, so time queued behind a slow one counts), in
// two phases of BENCH_SECONDS (default 4) per round: alone, and while BENCH_SCANNERS clients
// (default 4) each send one heavy filtered listing after another. The heavy listing is a range on
// a NUMBER field and a startsWith on a TEXT field that every contact matches: the page is sorted
// from all of them, each probed for the second filter, and counted (hundreds of milliseconds).
// BENCH_ROUNDS rounds (default 3), the phases' order alternating; the figures are medians over
// the rounds, the load average is printed before and after.
// BENCH_SETUPS (default "sqlite/1,postgres/1"; "/2" for two workers). BENCH_MAIN: another
// checkout's src/cli/main.ts, measured the same way on the same database right after this one
// (the code before a change, with the same migrations).
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { createKey } from '../src/auth/service.ts';
import type { DialectName } from '../src/db/types.ts';
import { addField, loadDefinitions } from '../src/definitions/service.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { probeServices } from '../test/helpers/services.ts';
import { seedFilterContacts } from './filter-seed.ts';
import { MAIN, median, startServer, stop } from './run.ts';

const N = Number(process.env.BENCH_CONTACTS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const SCANNERS = Number(process.env.BENCH_SCANNERS ?? 4);
const SETUPS = (process.env.BENCH_SETUPS ?? 'sqlite/1,postgres/1').split(',');
const HEAVY = `/v1/contacts?${new URLSearchParams({ limit: '25', 'score[greaterThanOrEqual]': '0', 'code[startsWith]': 'code' }).toString()}`;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]! : NaN;
};

function get(agent: Agent, port: number, secret: string, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ agent, host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

interface Phase {
  reads: number[];
  readFailures: number;
  scans: number[];
  scanStatuses: Record<number, number>;
}

/** Point reads at RATE for SECONDS; with `scanners`, that many clients send heavy listings meanwhile. */
async function phase(port: number, secret: string, scanners: number): Promise<Phase> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const out: Phase = { reads: [], readFailures: 0, scans: [], scanStatuses: {} };
  const start = performance.now();
  const until = start + SECONDS * 1000;
  const scanning = Array.from({ length: scanners }, async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      const status = await get(agent, port, secret, HEAVY);
      out.scans.push(performance.now() - t0);
      out.scanStatuses[status] = (out.scanStatuses[status] ?? 0) + 1;
    }
  });
  const reads: Promise<void>[] = [];
  for (let k = 0; ; k++) {
    const due = start + 200 + (k * 1000) / RATE;
    if (due >= until) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const id = `con_${String(Math.floor(Math.random() * N)).padStart(8, '0')}`;
    reads.push(
      get(agent, port, secret, `/v1/contacts/${id}`).then((status) => {
        if (status !== 200) out.readFailures++;
        out.reads.push(performance.now() - due);
      }),
    );
  }
  await Promise.all([...reads, ...scanning]);
  agent.destroy();
  return out;
}

async function measure(label: string, port: number, secret: string): Promise<void> {
  await phase(port, secret, 1);
  const quiet: Phase[] = [];
  const heavy: Phase[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      quiet.push(await phase(port, secret, 0));
      heavy.push(await phase(port, secret, SCANNERS));
    } else {
      heavy.push(await phase(port, secret, SCANNERS));
      quiet.push(await phase(port, secret, 0));
    }
  }
  const fig = (ps: Phase[]) => ({
    p50: median(ps.map((p) => pct(p.reads, 50))),
    p99: median(ps.map((p) => pct(p.reads, 99))),
    failed: ps.reduce((n, p) => n + p.readFailures, 0),
  });
  const [q, h] = [fig(quiet), fig(heavy)];
  const scans = heavy.flatMap((p) => p.scans);
  const statuses: Record<number, number> = {};
  for (const p of heavy) for (const [s, n] of Object.entries(p.scanStatuses)) statuses[Number(s)] = (statuses[Number(s)] ?? 0) + n;
  console.log(`${label} (load ${load()})`);
  console.log(
    `  point reads alone              p50 ${q.p50.toFixed(1).padStart(7)} ms  p99 ${q.p99.toFixed(1).padStart(7)} ms${q.failed ? `  ${q.failed} failed` : ''}`,
  );
  console.log(
    `  point reads beside ${SCANNERS} scanners   p50 ${h.p50.toFixed(1).padStart(7)} ms  p99 ${h.p99.toFixed(1).padStart(7)} ms${h.failed ? `  ${h.failed} failed` : ''}  (p99 ${(h.p99 / q.p99).toFixed(1)} × alone)`,
  );
  console.log(
    `  heavy listings                 ${(scans.length / (ROUNDS * SECONDS)).toFixed(1)}/s  p50 ${pct(scans, 50).toFixed(0)} ms  p99 ${pct(scans, 99).toFixed(0)} ms  statuses ${JSON.stringify(statuses)}`,
  );
}

async function run(dialect: DialectName, workers: number): Promise<void> {
  const tdb = await createTestDb(dialect);
  try {
    const db = tdb.db.kysely;
    const ws = (await createWorkspace(systemCtx(db), { name: 'bench' })).id;
    const ctx = operatorCtx(db, ws);
    await addField(ctx, { objectType: 'contact', key: 'code', label: 'Code', valueType: 'TEXT' });
    await addField(ctx, { objectType: 'contact', key: 'score', label: 'Score', valueType: 'NUMBER' });
    const defs = (await loadDefinitions(ctx, { objectType: 'contact' }))!;
    const { secret } = await createKey(ctx, { userId: null, scopes: null, expiresInMs: null });
    const t0 = performance.now();
    await seedFilterContacts(db, dialect, ws, defs, N);
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    console.log(`\n[${dialect}/${workers}] seeded ${N} contacts in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const mains: [string, string][] = [['this checkout', MAIN]];
    if (process.env.BENCH_MAIN) mains.push([process.env.BENCH_MAIN, process.env.BENCH_MAIN]);
    for (const [label, main] of mains) {
      const server = await startServer(tdb, workers, {}, main, 120_000);
      try {
        await measure(`[${dialect}/${workers}] ${label}`, Number(new URL(server.url).port), secret);
      } finally {
        await stop(server.child);
      }
    }
  } finally {
    await tdb.drop();
  }
}

const pg = (await probeServices()).postgres;
console.log(
  `${N} contacts; point reads at ${RATE}/s; ${SCANNERS} scanners; ${ROUNDS} rounds of ${SECONDS} s per phase; load average before: ${load()}\nheavy listing: GET ${decodeURIComponent(HEAVY)}`,
);
for (const s of SETUPS) {
  const [dialect, workers] = s.split('/') as [DialectName, string];
  if (dialect === 'postgres' && !pg) {
    console.log('PostgreSQL not reachable: skipped');
    continue;
  }
  await run(dialect, Number(workers ?? 1));
}
console.log(`\nload average after: ${load()}`);
