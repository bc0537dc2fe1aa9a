// Two checkouts of the server on one seeded database, alternated round by round on one route: this
// one and another (--before DIR, e.g. the commit before a change extracted with git archive next
// to this node_modules), each round measuring the bare baseline first. Prints per round and as
// medians the share of the baseline, and what each request cost in CPU: the server's processes
// (workers included) and, on PostgreSQL, the backends serving the server's connections (found
// through `ss`), read from /proc. CPU per request moves less with the machine's load than
// requests/s (docs/performance.md §Pipelined PostgreSQL connections). Linux only.
//   node bench/paired.ts --before DIR [--dialect postgres|sqlite] [--workers 1] [--route 'GET /v1/lists/{id}'] [--rounds 4]
// With --separate each side seeds a database of its own with its own code (its bench/run.ts and
// bench/routes.ts), for a checkout whose migrations differ from this one's: the route is then
// found by name in each checkout, and each server reads the rows its own seed wrote.
// BENCH_SECONDS (default 3) and BENCH_CONNECTIONS apply as in bench/run.ts.
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/types.ts';
import { backends, cpuMs, family } from './proc-cpu.ts';
import { ROUTES } from './routes.ts';
import { baselineFor, load, MAIN, median, routeRotation, seedContext, startBaseline, startServer, stop } from './run.ts';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    dialect: { type: 'string', default: 'postgres' },
    workers: { type: 'string', default: '1' },
    route: { type: 'string', default: 'GET /v1/lists/{id}' },
    rounds: { type: 'string', default: '4' },
    separate: { type: 'boolean', default: false },
  },
});
if (!args.before) throw new Error('--before DIR is required');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const dialect = args.dialect as DialectName;
const beforeDir = resolve(args.before);

/** One side's seeded database and its route, seeded by `dir`'s own bench code when --separate. */
async function seeded(dir: string | undefined) {
  const bench = dir ? ((await import(join(dir, 'bench/run.ts'))) as { seedContext: typeof seedContext }) : { seedContext };
  const routes = dir ? ((await import(join(dir, 'bench/routes.ts'))) as { ROUTES: typeof ROUTES }).ROUTES : ROUTES;
  const route = routes.find((r) => r.name === args.route);
  if (!route) throw new Error(`no route ${args.route} in ${dir ?? '.'}/bench/routes.ts`);
  const { tdb, ctx } = await bench.seedContext(dialect);
  await route.seed?.(ctx);
  await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(tdb.db.kysely);
  return { tdb, ctx, route };
}

const mine = await seeded(undefined);
const theirs = args.separate ? await seeded(beforeDir) : mine;
const { route, ctx } = mine;
const baseline = await startBaseline();
const sides = [
  { name: 'this checkout', main: MAIN, ...mine },
  { name: 'before', main: join(beforeDir, 'src/cli/main.ts'), ...theirs },
];
const servers = [];
for (const side of sides)
  servers.push({
    ...side,
    ...(await startServer(side.tdb, Number(args.workers), {}, side.main)),
    ratios: [] as number[],
    cpu: [] as number[],
    pg: [] as number[],
  });
console.error(
  `${route.name}, ${dialect}, ${args.workers} worker(s), ${args.rounds} rounds of ${SECONDS} s${args.separate ? ', a database each' : ''}; load ${loadavg()[0]!.toFixed(1)}`,
);
try {
  for (let i = 0; i < Number(args.rounds); i++) {
    const base = await load(baseline.url, { ...baselineFor(route, ctx), seconds: SECONDS });
    const parts = [`round ${i + 1}: baseline ${Math.round(base.rps)}/s`];
    for (const s of i % 2 ? [...servers].reverse() : servers) {
      const pids = family(s.child.pid!);
      const before = new Map([...pids, ...backends(pids)].map((p) => [p, cpuMs(p)]));
      const headers = { authorization: `Bearer ${s.ctx.secret}`, 'service-version': '2026-03-01' };
      const body = s.route.body ? JSON.stringify(s.route.body(s.ctx)) : undefined;
      const m = await load(s.url + s.route.path(s.ctx), {
        method: s.route.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...routeRotation(s.route, s.ctx),
        seconds: SECONDS,
      });
      // A failing route is fast: a ratio counts only when every answer was a success.
      if (m.non2xx + m.errors > 0) throw new Error(`${s.name}: ${m.non2xx} non-2xx answers and ${m.errors} errors`);
      // The warm-up second of load() counts too: CPU over every request sent.
      const requests = m.rps * (SECONDS + 1);
      const used = (ps: number[]) => ps.reduce((n, p) => n + cpuMs(p) - (before.get(p) ?? 0), 0);
      const cpu = (used(family(s.child.pid!)) * 1000) / requests;
      const pg = (used(backends(family(s.child.pid!))) * 1000) / requests;
      s.ratios.push(m.rps / base.rps);
      s.cpu.push(cpu);
      s.pg.push(pg);
      parts.push(
        `${s.name} ${Math.round(m.rps)}/s (${(m.rps / base.rps).toFixed(3)}), ${cpu.toFixed(0)} µs server, ${pg.toFixed(0)} µs PostgreSQL per request`,
      );
    }
    console.error(`${parts.join(' | ')}; load ${loadavg()[0]!.toFixed(1)}`);
  }
  for (const s of servers) {
    console.log(
      `${s.name}: ${median(s.ratios).toFixed(3)} of the baseline (${s.ratios.map((r) => r.toFixed(3)).join(' ')}), ` +
        `${median(s.cpu).toFixed(0)} µs server and ${median(s.pg).toFixed(0)} µs PostgreSQL CPU per request (medians)`,
    );
  }
} finally {
  for (const s of servers) await stop(s.child);
  await stop(baseline.child);
  for (const { tdb } of new Set([mine, theirs])) await tdb.drop();
}
