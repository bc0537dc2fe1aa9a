// The cost of rate limits (issue 15, goal 4): GET /v1/lists/{id} on one database with WORKERS
// workers (default 2), rate limits shared through Redis, against the same setup with limits off.
// Also the limits kept by the cluster primary without Redis (workers ask it over IPC), for
// comparison. The limits are set far above what the machine serves, so every request takes a
// token and none is refused. In each round the setup with limits off is measured right before the
// one with limits on (bench/run.ts pairedRounds); the ratio is the median of the rounds' ratios.
// Redis's own counts of script calls and socket reads are read before and after: the limits were
// on Redis, and how many calls arrived per read (what auto-pipelining changes).
// --before DIR adds the limits on Redis as served by another checkout (DIR/src/cli/main.ts, e.g.
// the commit before a change, extracted with git archive next to this node_modules), paired
// against limits off in the same way.
//   node bench/ratelimit.ts [--dialect sqlite|postgres] [--workers 2] [--rounds 5] [--before DIR]
// BENCH_SECONDS and BENCH_CONNECTIONS apply as in bench/run.ts.
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/types.ts';
import { TEST_REDIS_URL } from '../test/helpers/services.ts';
import { seedList } from './seeds.ts';
import { load, type Measurement, median, pairedRounds, seedContext, startServer, stop } from './run.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'sqlite' },
    workers: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    before: { type: 'string' },
  },
});
const WORKERS = Number(args.workers);
const ROUNDS = Number(args.rounds);
const ON = { RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000', RATE_LIMIT_SEARCH: '1000000' };

interface RedisCounts {
  calls: number;
  reads: number;
}

/** Script calls run and socket reads processed by Redis so far (INFO; reads: Redis 6 and later). */
async function counts(redis: Redis): Promise<RedisCounts> {
  const info = (await redis.info('commandstats')) + (await redis.info('stats'));
  // Scripts run as EVALSHA once loaded, EVAL the first time.
  const calls = [...info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  return { calls, reads: Number(/total_reads_processed:(\d+)/.exec(info)?.[1] ?? NaN) };
}

/** Measures `fn`, with what Redis did meanwhile. */
async function counted<T>(redis: Redis, fn: () => Promise<T>): Promise<T & { redis: RedisCounts }> {
  const a = await counts(redis);
  const r = await fn();
  const b = await counts(redis);
  return { ...r, redis: { calls: b.calls - a.calls, reads: b.reads - a.reads } };
}

const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const fmt = (m: Measurement) => `${Math.round(m.rps)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms`;

async function main(): Promise<void> {
  const dialect = args.dialect as DialectName;
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  await redis.connect();
  const { tdb, ctx } = await seedContext(dialect);
  const servers: Awaited<ReturnType<typeof startServer>>[] = [];
  try {
    await seedList(ctx);
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(tdb.db.kysely);
    const [off, onRedis, onLocal] = [
      await startServer(tdb, WORKERS),
      await startServer(tdb, WORKERS, { ...ON, REDIS_URL: TEST_REDIS_URL }),
      await startServer(tdb, WORKERS, ON),
    ];
    servers.push(off, onRedis, onLocal);
    const beforeMain = args.before ? join(resolve(args.before), 'src/cli/main.ts') : undefined;
    const onBefore = beforeMain ? await startServer(tdb, WORKERS, { ...ON, REDIS_URL: TEST_REDIS_URL }, beforeMain) : undefined;
    if (onBefore) servers.push(onBefore);
    const path = `/v1/lists/${String(ctx.state.listId)}`;
    const headers = { authorization: `Bearer ${ctx.secret}`, 'service-version': '2026-03-01' };
    const get = (s: { url: string }) => () => load(s.url + path, { headers });

    console.error(`${dialect}, ${WORKERS} workers, GET ${path}: ${ROUNDS} paired rounds`);
    const load0 = loadNow();
    const viaRedis = await counted(redis, () => pairedRounds(get(off), get(onRedis), ROUNDS));
    const calls = viaRedis.redis.calls;
    const viaPrimary = await pairedRounds(get(off), get(onLocal), ROUNDS);
    const viaBefore = onBefore ? await counted(redis, () => pairedRounds(get(off), get(onBefore), ROUNDS)) : undefined;
    const bad = [viaRedis, viaPrimary, ...(viaBefore ? [viaBefore] : [])].reduce(
      (n, p) => n + p.non2xx + p.errors + p.references.reduce((k, r) => k + r.non2xx + r.errors, 0),
      0,
    );

    const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
    console.log(`GET /v1/lists/{id}, ${dialect}, ${WORKERS} workers, ${ROUNDS} paired rounds (medians); load average ${load0} before, ${loadNow()} after`);
    console.log(`  limits off (reference)         ${fmt(medianOf(viaRedis.references))}`);
    console.log(`  limits on Redis                ${fmt(viaRedis)}  ratio ${viaRedis.ratio.toFixed(2)} (${range(viaRedis.ratios)})`);
    console.log(`  limits in the cluster primary  ${fmt(viaPrimary)}  ratio ${viaPrimary.ratio.toFixed(2)} (${range(viaPrimary.ratios)})`);
    if (viaBefore) console.log(`  limits on Redis, ${args.before}  ${fmt(viaBefore)}  ratio ${viaBefore.ratio.toFixed(2)} (${range(viaBefore.ratios)})`);
    // Decisions the Redis servers made locally (refusals on the level Redis last reported, for a
    // late command; local buckets, for one unanswered within REDIS_COMMAND_TIMEOUT_MS): under load,
    // a deadline shorter than Redis's answers on a busy machine shows here.
    const fallbacks = async (s: { url: string }) =>
      Number(/^rolodex_rate_limit_redis_fallback_total (\d+)/m.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1] ?? NaN);
    console.log(
      `  decided locally for want of a timely Redis answer: ${await fallbacks(onRedis)}${onBefore ? ` (${args.before}: ${await fallbacks(onBefore)})` : ''}`,
    );
    const perRead = (c: RedisCounts) => `${c.calls} script calls in ${c.reads} socket reads (${(c.calls / c.reads).toFixed(1)} per read)`;
    console.log(`  Redis, limits on Redis: ${perRead(viaRedis.redis)}`);
    if (viaBefore) console.log(`  Redis, ${args.before}: ${perRead(viaBefore.redis)}`);
    if (bad > 0 || calls === 0) {
      console.error(`${bad} non-2xx responses or errors; ${calls} script calls on Redis`);
      process.exitCode = 1;
    }
  } finally {
    for (const s of servers) await stop(s.child);
    await tdb.drop();
    redis.disconnect();
  }
}

function medianOf(ms: Measurement[]): Measurement {
  return { rps: median(ms.map((m) => m.rps)), p50: median(ms.map((m) => m.p50)), p99: median(ms.map((m) => m.p99)), non2xx: 0, errors: 0 };
}

await main();
