// A server's writes while `rolodex import` runs on the same database (docs/import.md §Sharing the
// database). A server (one process) serves a stream of `POST /v1/contacts` into another workspace
// at a fixed rate, first alone (the baseline), then during an import of --contacts contacts (with
// their accounts and 5 field definitions) into a workspace of their own; meanwhile a reader polls
// the imported workspace's `totalCount` of contacts and accounts, each of which must be 0 or the
// whole import at every read. The stream is open-loop: each request leaves at its scheduled time
// whatever the earlier ones are doing, and its latency counts from that time. Prints p50, p99 and
// the slowest write, failures, what the reader saw, the import's seconds and steps, the writes over
// 100 ms with their time into the import (the steps place them), and the load average.
//   node bench/import-sharing.ts [--contacts 100000] [--dialect sqlite|postgres|both] [--rate 20]
//     [--baseline 5] [--commit atomic|batched] [--same] [--seed 0] [--against DIR] [--rounds 1]
// With --seed S, S contacts are first imported (atomic, before the server starts) into a workspace
// of their own, so that the timed import writes into B-trees of that size; --rate 0 sends no
// writes (the reader still polls). The import's rate (contacts/s) and its peak resident memory
// (VmHWM, read from /proc every 250 ms) are printed too. With --against DIR (another checkout)
// and --rounds R, the import is run R times with this checkout's CLI and R times with DIR's,
// alternating (and which goes first), each into a fresh workspace of the same database and beside
// the same server, and the medians are printed.
// With --same the stream creates its contacts in the imported workspace instead (the same listing
// as the import's), and the reader checks the accounts only.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKey } from '../src/auth/service.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { accountsFor, writeNdjson } from './import-data.ts';
import { runImport } from './import-child.ts';
import { MAIN, startServer, stop } from './run.ts';
import { quantile, slowest, streamWrites, summary } from './write-stream.ts';

const { values: args } = parseArgs({
  options: {
    contacts: { type: 'string', default: '100000' },
    dialect: { type: 'string', default: 'sqlite' },
    rate: { type: 'string', default: '20' },
    baseline: { type: 'string', default: '5' },
    commit: { type: 'string' },
    same: { type: 'boolean', default: false },
    seed: { type: 'string', default: '0' },
    against: { type: 'string' },
    rounds: { type: 'string', default: '1' },
  },
});
const CONTACTS = Number(args.contacts);
const ACCOUNTS = accountsFor(CONTACTS);
const RATE = Number(args.rate);

const SLOW_MS = 100;
/** The import of a checkout: this one's, or --against's. */
interface Variant {
  label: string;
  main: string;
}
const writeStream = (url: string, secret: string, until: Promise<unknown>) => streamWrites(url, secret, RATE, until, SLOW_MS);

/** Reads the imported workspace's totals until `until` resolves; every total seen, per listing. */
async function reader(url: string, secret: string, until: Promise<unknown>): Promise<{ contacts: Set<number>; accounts: Set<number> }> {
  const seen = { contacts: new Set<number>(), accounts: new Set<number>() };
  let done = false;
  void until.then(() => (done = true));
  while (!done) {
    for (const [path, set] of [
      ['contacts', seen.contacts],
      ['accounts', seen.accounts],
    ] as const) {
      const res = await fetch(`${url}/v1/${path}?limit=1`, { headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' } });
      const body = (await res.json()) as { totalCount?: number };
      if (res.status !== 200) throw new Error(`GET /v1/${path}: ${res.status} ${JSON.stringify(body)}`);
      set.add(body.totalCount as number);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return seen;
}

async function run(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const tdb = await createTestDb(dialect);
  const env = { ...process.env, DATA_DIR: tdb.dataDir, LOG_LEVEL: 'warn', ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
  try {
    const other = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'writes' });
    const keyOf = async (ws: string) => (await createKey(operatorCtx(tdb.db.kysely, ws), { userId: null, scopes: null, expiresInMs: null })).secret;
    const otherKey = await keyOf(other.id);
    const file = join(tdb.dataDir, 'import.ndjson');
    await writeNdjson(file, CONTACTS);
    if (Number(args.seed) > 0) {
      const seeded = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'seed' });
      const seedFile = join(tdb.dataDir, 'seed.ndjson');
      await writeNdjson(seedFile, Number(args.seed));
      const seeding = spawn(process.execPath, [MAIN, 'import', '--workspace', seeded.id, seedFile, '--json', '--commit', 'atomic'], { env, stdio: 'ignore' });
      const [seedCode] = (await once(seeding, 'exit')) as [number];
      if (seedCode !== 0) throw new Error(`seed import failed (${seedCode})`);
    }
    const srv = await startServer(tdb, 1, process.env.XBEGIN ? { XBEGIN: process.env.XBEGIN } : {});
    try {
      const baseline = await writeStream(srv.url, otherKey, new Promise((r) => setTimeout(r, Number(args.baseline) * 1000)));
      const variants: Variant[] = [
        { label: 'this checkout', main: MAIN },
        ...(args.against ? [{ label: args.against, main: join(args.against, 'src/cli/main.ts') }] : []),
      ];
      const results: { variant: Variant; rate: number; p99: number; slow: number }[] = [];
      for (let round = 0; round < Number(args.rounds); round++)
        for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
          const target = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'imported' });
          const targetKey = await keyOf(target.id);
          const load0 = loadavg()[0] as number;
          const exited = runImport(variant.main, ['--workspace', target.id, file, ...(args.commit ? ['--commit', args.commit] : [])], env);
          const streamKey = args.same ? targetKey : otherKey;
          const [during, seen] = await Promise.all([writeStream(srv.url, streamKey, exited), reader(srv.url, targetKey, exited)]);
          const { code, out, seconds, peakMiB } = await exited;
          if (code !== 0) throw new Error(`import failed (${code})`);
          results.push({ variant, rate: CONTACTS / seconds, p99: quantile(during, 0.99), slow: during.slow.length });
          const { commit, journal, phases } = JSON.parse(out) as { commit: string; journal?: string; phases?: Record<string, number> };
          const whole = (set: Set<number>, n: number) => [...set].every((x) => x === 0 || x === n);
          // A batched import shows its rows chunk by chunk: thousands of totals, given as a range.
          const totals = (set: Set<number>) => {
            const sorted = [...set].sort((a, b) => a - b);
            return sorted.length <= 12 ? sorted.join(', ') : `${sorted.length} different totals from ${sorted[0]} to ${sorted.at(-1)}`;
          };
          process.stdout.write(
            [
              `== ${dialect} (${variant.label}): import of ${CONTACTS} contacts, ${ACCOUNTS} accounts (${commit}${journal ? `, ${journal}` : ''}) while a server writes ${RATE}/s into ${args.same ? 'the same' : 'another'} workspace`,
              `  import                 ${seconds.toFixed(1)} s  ${Math.round(CONTACTS / seconds)} contacts/s  peak ${Math.round(peakMiB)} MiB resident${Number(args.seed) > 0 ? `  (beside ${args.seed} seeded contacts)` : ''}`,
              `  writes before          ${summary(baseline)}`,
              `  writes during          ${summary(during)}`,
              ...(during.failures.length ? [`  first failure          ${during.failures[0]}`] : []),
              `  import's steps (s)     ${Object.entries(phases ?? {})
                .map(([k, v]) => `${k} ${v.toFixed(2)}`)
                .join(', ')}`,
              `  writes over ${SLOW_MS} ms     ${during.slow.length}${during.slow.length ? `: ${slowest(during)}` : ''}`,
              `  before, over ${SLOW_MS} ms    ${baseline.slow.length}${baseline.slow.length ? `: ${slowest(baseline)}` : ''}`,
              ...(args.same
                ? []
                : [`  reader saw contacts    ${totals(seen.contacts)}  (${whole(seen.contacts, CONTACTS) ? 'none or all' : 'PART OF THE IMPORT'})`]),
              `  reader saw accounts    ${totals(seen.accounts)}  (${whole(seen.accounts, ACCOUNTS) ? 'none or all' : 'PART OF THE IMPORT'})`,
              `  load average (1 min)   ${load0.toFixed(2)} before, ${(loadavg()[0] as number).toFixed(2)} after`,
              '',
            ].join('\n'),
          );
        }
      if (variants.length > 1 || Number(args.rounds) > 1)
        for (const variant of variants) {
          const mine = results.filter((r) => r.variant === variant);
          const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
          const list = (xs: number[]) => `${median(xs).toFixed(0)} (${xs.map((x) => x.toFixed(0)).join(', ')})`;
          process.stdout.write(
            `median of ${mine.length} (${variant.label}): ${list(mine.map((r) => r.rate))} contacts/s, write p99 ${list(mine.map((r) => r.p99))} ms, writes over ${SLOW_MS} ms ${list(mine.map((r) => r.slow))}\n`,
          );
        }
    } finally {
      await stop(srv.child);
    }
  } finally {
    await tdb.drop();
  }
}

for (const dialect of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as 'sqlite' | 'postgres']) await run(dialect);
