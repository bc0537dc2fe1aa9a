// Resident memory of an idle server: `rolodex serve` started as `npm start` starts it (through
// bin/rolodex.js, so with the compile cache the first, uncounted start wrote), one process, SQLite
// and blobs on local disk (no S3, no Redis), started --starts times on the same migrated data
// directory. Each start answers /readyz, then sits idle for 5 s (the jobs' first rounds) before its
// VmRSS is read. Prints every sample
// and the median: a process should load only what its configuration uses (docs/performance.md).
// Beside it, the floor: a bare `node` process that only waits on a timer, started the same way.
// Also how often the idle process wakes (context switches of all its threads over the next 2 s):
// on a small virtual machine every wake-up takes time from the processes that have work.
//   node bench/idle-rss.ts [--starts 7]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../test/helpers/process.ts';
import { median, start, stop } from './run.ts';

const { values: args } = parseArgs({ options: { starts: { type: 'string', default: '7' } } });
const BIN = new URL('../bin/rolodex.js', import.meta.url).pathname;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

/** Voluntary and involuntary context switches of every thread of `pid` so far. */
function switches(pid: number): number {
  let n = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
    for (const m of status.matchAll(/ctxt_switches:\s+(\d+)/g)) n += Number(m[1]);
  }
  return n;
}

async function sample(dataDir: string): Promise<{ rss: number; wakeups: number }> {
  const port = await freePort();
  const env = { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', WORKERS: '1' };
  const child = await start([BIN, 'serve'], env, `http://127.0.0.1:${port}/readyz`);
  try {
    await new Promise((r) => setTimeout(r, 5000));
    const rss = rssMb(child.pid!);
    const before = switches(child.pid!);
    await new Promise((r) => setTimeout(r, 2000));
    return { rss, wakeups: (switches(child.pid!) - before) / 2 };
  } finally {
    await stop(child);
  }
}

/** VmRSS of a bare Node process idle on a timer, a second after it started. */
async function floorMb(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 1000));
    return rssMb(child.pid!);
  } finally {
    child.kill();
    await once(child, 'exit');
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-rss-'));
try {
  await sample(dataDir); // migrates the data directory and writes the compile cache; not counted
  const samples: { rss: number; wakeups: number }[] = [];
  for (let i = 0; i < Number(args.starts); i++) samples.push(await sample(dataDir));
  const rss = samples.map((s) => s.rss);
  const wakeups = samples.map((s) => s.wakeups);
  const floor: number[] = [];
  for (let i = 0; i < 3; i++) floor.push(await floorMb());
  console.log(
    `idle RSS, disk blobs, SQLite, 1 process: median ${median(rss).toFixed(1)} MB (${rss.map((s) => s.toFixed(1)).join(', ')}); load average ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(`floor, bare node idle on a timer: median ${median(floor).toFixed(1)} MB (${floor.map((s) => s.toFixed(1)).join(', ')})`);
  console.log(`idle wake-ups per second: median ${median(wakeups)} (${wakeups.join(', ')})`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
