// A server's writes while `rolodex export` runs on the same database (docs/import.md §One state of
// the workspace). --seed contacts (with their accounts) are imported into a workspace
// before the server starts; the server then serves an open-loop stream of `POST /v1/contacts` into
// another workspace at --rate per second, first alone (the baseline), then while the export of the
// seeded workspace runs, then for --after seconds once it ended (when the log the export's read
// held back is copied into the database). Prints for each: p50, p99, the slowest write, the writes
// over 100 ms; the export's seconds; and, on SQLite, the largest size of the write-ahead log seen
// during the export and after it. With --against DIR (another checkout) and --rounds R, the export
// is run R times with this checkout's CLI and R times with DIR's, alternating (and which goes first).
//   node bench/export-sharing.ts [--seed 100000] [--dialect sqlite|postgres] [--rate 20]
//     [--baseline 5] [--after 5] [--against DIR] [--rounds 1]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKey } from '../src/auth/service.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { writeNdjson } from './import-data.ts';
import { MAIN, startServer, stop } from './run.ts';
import { quantile, slowest, streamWrites, summary } from './write-stream.ts';

const { values: args } = parseArgs({
  options: {
    seed: { type: 'string', default: '100000' },
    dialect: { type: 'string', default: 'sqlite' },
    rate: { type: 'string', default: '20' },
    baseline: { type: 'string', default: '5' },
    after: { type: 'string', default: '5' },
    against: { type: 'string' },
    rounds: { type: 'string', default: '1' },
  },
});
const RATE = Number(args.rate);
const SLOW_MS = 100;
const sleep = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

/** The largest size the file reached while `until` was pending, polled every 50 ms, in MiB. */
async function peakSize(file: string, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => (done = true));
  let peak = 0;
  while (!done) {
    peak = Math.max(peak, statSync(file, { throwIfNoEntry: false })?.size ?? 0);
    await sleep(0.05);
  }
  return peak / 2 ** 20;
}

async function exportOnce(main: string, workspaceId: string, out: string, env: NodeJS.ProcessEnv): Promise<{ code: number; seconds: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [main, 'export', '--workspace', workspaceId, out], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = (await once(child, 'exit')) as [number];
  return { code, seconds: (performance.now() - t0) / 1000 };
}

async function run(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const tdb = await createTestDb(dialect);
  const env = { ...process.env, DATA_DIR: tdb.dataDir, LOG_LEVEL: 'warn', ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
  const wal = join(tdb.dataDir, 'rolodex.db-wal');
  try {
    const other = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'writes' });
    const key = (await createKey(operatorCtx(tdb.db.kysely, other.id), { userId: null, scopes: null, expiresInMs: null })).secret;
    const seeded = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'seed' });
    const seedFile = join(tdb.dataDir, 'seed.ndjson');
    await writeNdjson(seedFile, Number(args.seed));
    const seeding = spawn(process.execPath, [MAIN, 'import', '--workspace', seeded.id, seedFile, '--json', '--commit', 'atomic'], { env, stdio: 'ignore' });
    const [seedCode] = (await once(seeding, 'exit')) as [number];
    if (seedCode !== 0) throw new Error(`seed import failed (${seedCode})`);
    const srv = await startServer(tdb, 1);
    try {
      const variants = [
        { label: 'this checkout', main: MAIN },
        ...(args.against ? [{ label: args.against, main: join(args.against, 'src/cli/main.ts') }] : []),
      ];
      for (let round = 0; round < Number(args.rounds); round++)
        for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
          const baseline = await streamWrites(srv.url, key, RATE, sleep(Number(args.baseline)), SLOW_MS);
          const load0 = loadavg()[0] as number;
          const out = join(tdb.dataDir, 'export.ndjson');
          const exported = exportOnce(variant.main, seeded.id, out, env);
          const [during, walDuring] = await Promise.all([streamWrites(srv.url, key, RATE, exported, SLOW_MS), peakSize(wal, exported)]);
          const { code, seconds } = await exported;
          if (code !== 0) throw new Error(`export failed (${code})`);
          rmSync(out, { force: true });
          const later = sleep(Number(args.after));
          const [after, walAfter] = await Promise.all([streamWrites(srv.url, key, RATE, later, SLOW_MS), peakSize(wal, later)]);
          process.stdout.write(
            [
              `== ${dialect} (${variant.label}): export of ${args.seed} contacts while a server writes ${RATE}/s into another workspace`,
              `  export                 ${seconds.toFixed(1)} s`,
              `  writes before          ${summary(baseline)}`,
              `  writes during          ${summary(during)}  p99 ${quantile(during, 0.99).toFixed(1)} ms`,
              `  writes after (${args.after} s)    ${summary(after)}`,
              `  over ${SLOW_MS} ms             before ${baseline.slow.length}, during ${during.slow.length}${during.slow.length ? ` (${slowest(during)})` : ''}, after ${after.slow.length}${after.slow.length ? ` (${slowest(after)})` : ''}`,
              ...(dialect === 'sqlite' ? [`  log (-wal) peak        ${walDuring.toFixed(1)} MiB during, ${walAfter.toFixed(1)} MiB after`] : []),
              `  load average (1 min)   ${load0.toFixed(2)} before, ${(loadavg()[0] as number).toFixed(2)} after`,
              '',
            ].join('\n'),
          );
        }
    } finally {
      await stop(srv.child);
    }
  } finally {
    await tdb.drop();
  }
}

await run(args.dialect === 'postgres' ? 'postgres' : 'sqlite');
