// One route on PostgreSQL against SQLite, the two servers up side by side and measured back to
// back in each round (`pairedRounds`), so that PostgreSQL's rate as a share of SQLite's is taken
// per round and its median reported: the goals stated that way (docs/performance.md §Routes) are
// not read off two shares of a baseline measured minutes apart. Each server has a database of its
// own, seeded and analyzed as bench/run.ts does. Where PostgreSQL's autovacuum is off (as on the
// development machine), each of its measurements starts after a VACUUM ANALYZE of its database,
// which a running autovacuum would have made by then: the rounds then measure the same database
// a deployment would have, not one whose dead rows and statistics date from the seeding.
//   node bench/dialects.ts [--route 'POST /v1/lists'] [--rounds 6] [--workers 1]
// BENCH_SECONDS, BENCH_CONNECTIONS and BENCH_CLIENT apply as in bench/run.ts.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { ROUTES } from './routes.ts';
import { measure, median, pairedRounds, seedContext, startServer, stop } from './run.ts';

const { values: args } = parseArgs({
  options: { route: { type: 'string', default: 'POST /v1/lists' }, rounds: { type: 'string', default: '6' }, workers: { type: 'string', default: '1' } },
});
const route = ROUTES.find((r) => r.name === args.route);
if (!route) throw new Error(`--route: one of ${ROUTES.map((r) => `'${r.name}'`).join(', ')}`);
const workers = Number(args.workers);

async function serve(dialect: 'sqlite' | 'postgres') {
  const { tdb, ctx } = await seedContext(dialect);
  await route!.seed?.(ctx);
  await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(tdb.db.kysely);
  const srv = await startServer(tdb, workers);
  const vacuum = dialect === 'postgres' && (await sql<{ autovacuum: string }>`show autovacuum`.execute(tdb.db.kysely)).rows[0]!.autovacuum !== 'on';
  const round = async () => {
    if (vacuum) await sql`vacuum analyze`.execute(tdb.db.kysely);
    return measure(srv.url + route!.path(ctx), route!, ctx);
  };
  return { round, close: async () => (await stop(srv.child), await tdb.drop()) };
}

const lite = await serve('sqlite');
const pg = await serve('postgres');
try {
  const before = loadavg()[0]!;
  const p = await pairedRounds(lite.round, pg.round, Number(args.rounds));
  console.log(`${route.name}, ${workers} worker(s), ${args.rounds} rounds; load ${before.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after`);
  p.ratios.forEach((r, i) => console.log(`round ${i + 1}: SQLite ${p.referenceRps[i]}/s, PostgreSQL ${Math.round(p.referenceRps[i]! * r)}/s: ${r.toFixed(2)}`));
  console.log(
    `PostgreSQL's rate / SQLite's: ${p.ratio.toFixed(2)} (median of ${p.ratios.map((r) => r.toFixed(2)).join(' ')}); SQLite ${Math.round(median(p.referenceRps))}/s, PostgreSQL ${Math.round(p.rps)}/s (medians)`,
  );
} finally {
  await pg.close();
  await lite.close();
}
