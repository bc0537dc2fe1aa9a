// A server's writes while another process brings SQLite's planner statistics up to date, as
// `rolodex import` does at its end and every CLI command after migrating (docs/design.md §Database
// statistics). The database holds --postings trigram postings (the largest index of a batched
// import: some 50 per contact), never analyzed; a server (one process) serves a stream of
// `POST /v1/contacts` at --rate per second into a workspace, and a child process runs
// `refreshStatistics` through a writer thread, as the import does. Each round removes the
// postings' statistics first, so every refresh counts them again. With --against DIR (another
// checkout) the refresh of DIR's code alternates with this checkout's, the same server serving.
// Prints, per refresh, its seconds, the writes scheduled while it ran (slowest, over 100 ms), and
// the medians.
//   node bench/statistics-sharing.ts [--postings 5000000] [--rate 50] [--rounds 3] [--against DIR]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { DatabaseSync } from 'node:sqlite';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createKey } from '../src/auth/service.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { median, startServer, stop } from './run.ts';
import { streamWrites, summary, type Stream } from './write-stream.ts';

const { values: args } = parseArgs({
  options: {
    postings: { type: 'string', default: '5000000' },
    rate: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    against: { type: 'string' },
  },
});
const HERE = resolve(import.meta.dirname, '..');

/** Refreshes the statistics of DATA_DIR's database with the code of checkout `dir`, in a process of its own. */
async function refresh(dir: string, dataDir: string): Promise<number> {
  const child = spawn(process.execPath, [join(HERE, 'bench/statistics-child.ts'), dir, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const [status] = (await once(child, 'exit')) as [number];
  if (status !== 0) throw new Error(`refresh with ${dir} failed (${status})`);
  return Number(out);
}

async function main(): Promise<void> {
  const tdb = await createTestDb('sqlite');
  try {
    const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'writes' });
    const secret = (await createKey(operatorCtx(tdb.db.kysely, ws.id), { userId: null, scopes: null, expiresInMs: null })).secret;
    const raw = new DatabaseSync(tdb.sqliteFile as string);
    const postings = Number(args.postings);
    const insert = raw.prepare('insert or ignore into record_trigrams (key, record_id) values (?, ?)');
    raw.exec('begin');
    for (let i = 0; i < postings; i++) insert.run(Math.floor(Math.random() * (postings / 26)), `con_${String(Math.floor(i / 50)).padStart(12, '0')}`);
    raw.exec('commit');
    const srv = await startServer(tdb, 1);
    const results = new Map<string, { seconds: number[]; max: number[] }>();
    try {
      // The server's first writes are cold (caches, prepared statements): warmed apart.
      await streamWrites(srv.url, secret, Number(args.rate), new Promise((r) => setTimeout(r, 1000)));
      const dirs = [HERE, ...(args.against ? [resolve(args.against)] : [])];
      for (let round = 0; round < Number(args.rounds); round++)
        for (const dir of round % 2 === 0 ? dirs : [...dirs].reverse()) {
          raw.exec("analyze sqlite_schema; delete from sqlite_stat1 where tbl = 'record_trigrams'");
          const load0 = loadavg()[0] as number;
          let seconds = 0;
          const refreshed = (async () => {
            await new Promise((r) => setTimeout(r, 1000));
            seconds = await refresh(dir, tdb.dataDir);
            await new Promise((r) => setTimeout(r, 1000));
          })();
          const s: Stream = await streamWrites(srv.url, secret, Number(args.rate), refreshed);
          await refreshed;
          const max = Math.max(...s.latencies);
          const r = results.get(dir) ?? { seconds: [], max: [] };
          results.set(dir, { seconds: [...r.seconds, seconds], max: [...r.max, max] });
          const slow = s.slow.map((w) => `${w.ms.toFixed(0)} ms@${w.at.toFixed(1)} s`).join(', ');
          process.stdout.write(
            `${dir === HERE ? 'this checkout' : dir}: refresh ${seconds.toFixed(2)} s; writes ${summary(s)}; over 100 ms: ${s.slow.length ? slow : 'none'}; load ${load0.toFixed(2)}\n`,
          );
        }
    } finally {
      await stop(srv.child);
      raw.close();
    }
    for (const [dir, r] of results)
      process.stdout.write(
        `median of ${r.seconds.length} (${dir === HERE ? 'this checkout' : dir}): refresh ${median(r.seconds).toFixed(2)} s, slowest write ${median(r.max).toFixed(0)} ms (${r.max.map((m) => m.toFixed(0)).join(', ')})\n`,
      );
  } finally {
    await tdb.drop();
  }
}

await main();
