// How long the start of SQLite's log again (src/db/log-bound.ts, docs/import.md §Sharing the
// database, The log stays short) holds a server's writes. A database of --rows rows of 1.5 KB; a
// "server" thread writes one row every 5 ms and times each write; the main thread (the import)
// fills the log with --mb MB of updates in chunks of 200 rows, then starts it again, either with a
// RESTART checkpoint alone (the code before) or with a PASSIVE checkpoint first (now), the two
// alternated over --rounds rounds. Prints, per way, the medians over the rounds of the RESTART's
// time (the write lock held) and of the slowest server write during the checkpoints, with the
// load average.
//   node bench/log-restart.ts [--rows 200000] [--mb 64] [--rounds 6] [--every 50]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    mb: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '6' },
    every: { type: 'string', default: '50' },
  },
});
const ROWS = Number(args.rows);
const dir = mkdtempSync(join(tmpdir(), 'rolodex-log-restart-'));
const file = join(dir, 'bench.db');

const db = new DatabaseSync(file, { timeout: 5000 });
db.exec('pragma journal_mode = wal; pragma synchronous = normal; create table t (id integer primary key, b blob)');
const insert = db.prepare('insert into t values (?, ?)');
db.exec('begin');
for (let i = 0; i < ROWS; i++) insert.run(i, randomBytes(1500));
db.exec('commit');
db.exec('pragma wal_checkpoint(truncate)');
const update = db.prepare('update t set b = ? where id = ?');

// The server: writes a row every --every ms; each write's time is posted with the time it began.
const server = new Worker(
  `const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file, { timeout: 5000 });
const write = db.prepare('update t set b = randomblob(100) where id = ?');
let stop = false;
parentPort.on('message', () => { stop = true; db.close(); parentPort.close(); });
(function tick() { if (stop) return; const t = performance.timeOrigin + performance.now(); db.exec('begin immediate'); write.run(Math.floor(Math.random() * 1000)); db.exec('commit'); parentPort.postMessage([t, performance.timeOrigin + performance.now() - t]); setTimeout(tick, workerData.every); })();`,
  { eval: true, workerData: { file, every: Number(args.every) } },
);
const writes: Array<[number, number]> = [];
server.on('message', (m: [number, number]) => writes.push(m));

const now = () => performance.timeOrigin + performance.now();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function fill(mb: number): Promise<void> {
  for (let pages = 0; pages < (mb * 2 ** 20) / 4096; pages += 200) {
    db.exec('begin immediate');
    for (let i = 0; i < 200; i++) update.run(randomBytes(1500), Math.floor(Math.random() * ROWS));
    db.exec('commit');
    await pause(1);
  }
}

const result: Record<string, { restart: number[]; slowest: number[] }> = {
  'restart alone': { restart: [], slowest: [] },
  'passive, then restart': { restart: [], slowest: [] },
};
const loads = [loadavg()[0]!];
for (let round = 0; round < Number(args.rounds); round++) {
  const ways = Object.keys(result);
  for (const way of round % 2 ? ways : ways.reverse()) {
    await fill(Number(args.mb));
    const from = now();
    if (way === 'passive, then restart') db.exec('pragma wal_checkpoint(passive)');
    const t = now();
    db.exec('pragma wal_checkpoint(restart)');
    result[way]!.restart.push(now() - t);
    await pause(100);
    // The writes that began during the checkpoints, or waited into them.
    const during = writes.filter(([at, took]) => at + took >= from && at <= t + result[way]!.restart.at(-1)!);
    result[way]!.slowest.push(Math.max(0, ...during.map(([, took]) => took)));
  }
}
loads.push(loadavg()[0]!);
server.postMessage('stop');
db.close();
rmSync(dir, { recursive: true, force: true });
for (const [way, r] of Object.entries(result))
  console.log(
    `${way.padEnd(22)} restart (write lock) median ${median(r.restart).toFixed(1)} ms; slowest server write during the checkpoints median ${median(r.slowest).toFixed(1)} ms (max ${Math.max(...r.slowest).toFixed(0)})`,
  );
console.log(`load average (1 min) ${loads.map((l) => l.toFixed(1)).join(' → ')}`);
