// `npm test`: the suite's files, run by node --test in a few processes at a time. A file that only
// calls the app in its own process shares a process with a few others (--test-isolation=none), so
// that Node, the runner and the app's modules are loaded once for the group, not once per file; a
// file that starts servers and command-line processes, stops them or watches its own process
// (test/ops, test/adversarial), or has root-level hooks (test/processes.ts), has one of its own.
// Arguments, when given, are the files to run instead of all. Each process's report is printed whole as it
// ends, then the run's summary, last; the exit status is 1 when any test or process failed.
// docs/architecture.md §Running the tests.
import { spawn } from 'node:child_process';
import { globSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { globalSetup, globalTeardown } from './global-setup.ts';
import { OWN_PROCESS, SHARED_FOLDERS } from './processes.ts';

/** Files per shared process: large enough to spare most loads, small enough to balance the run. */
const GROUP = 8;
const CONCURRENCY = Math.max(4, availableParallelism() * 2);
const NODE_ARGS = [
  '--test',
  '--test-isolation=none',
  '--test-reporter=spec',
  '--test-timeout=600000',
  '--import=./test/compile-cache.mjs',
  '--import=./test/exit-check.ts',
];
const COUNTS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;
/** A process's own summary lines, which give way to the run's. */
const SUMMARY = new RegExp(`^ℹ (${[...COUNTS, 'duration_ms'].join('|')}) [\\d.]+\n`, 'gm');

interface Outcome {
  files: string[];
  ok: boolean;
  counts: Counts | undefined;
}

function jobs(files: string[]): string[][] {
  const shares = (f: string) => SHARED_FOLDERS.some((d) => f.startsWith(d)) && !OWN_PROCESS.includes(f);
  const shared = files.filter(shares);
  const own = files.filter((f) => !shares(f));
  // Every n-th file to a group: neighbours by name are often alike in cost (import-…), and a group
  // of the slowest alone would be the run's tail.
  const n = Math.ceil(shared.length / GROUP);
  const groups = Array.from({ length: n }, (_, g) => shared.filter((_, i) => i % n === g));
  return [...own.map((f) => [f]), ...groups];
}

/** The counts of a spec report's summary (`ℹ tests 12`…); undefined when it has none. */
function countsOf(report: string): Counts | undefined {
  const counts = {} as Counts;
  for (const name of COUNTS) {
    const m = [...report.matchAll(new RegExp(`^ℹ ${name} (\\d+)$`, 'gm'))].at(-1);
    if (!m) return undefined;
    counts[name] = Number(m[1]);
  }
  return counts;
}

const children = new Set<ReturnType<typeof spawn>>();

function runJob(files: string[]): Promise<Outcome> {
  const started = performance.now();
  const child = spawn(process.execPath, [...NODE_ARGS, ...files], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.stderr.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      const report = Buffer.concat(chunks).toString('utf8');
      const counts = countsOf(report);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const ended = signal ? `killed by ${signal}` : `exit ${code}`;
      const tally = counts ? `, ${counts.tests} tests, ${counts.pass} passed, ${counts.fail} failed` : '';
      // The process's own summary gives way to the run's; a test's diagnostics (ℹ lines too) stay.
      const body = report.replace(SUMMARY, '');
      process.stdout.write(`\n═══ ${files.join(' ')} (${seconds} s, ${ended}${tally})\n${body}`);
      resolve({ files, ok: code === 0 && counts !== undefined && counts.fail === 0 && counts.cancelled === 0, counts });
    });
  });
}

async function main(): Promise<number> {
  const wanted = process.argv.slice(2);
  const files = wanted.length > 0 ? wanted : globSync('test/**/*.test.ts').sort();
  const started = performance.now();
  await globalSetup();
  const queue = jobs(files);
  const outcomes: Outcome[] = [];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) outcomes.push(await runJob(next));
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    globalTeardown();
  }
  const total = Object.fromEntries(COUNTS.map((n) => [n, outcomes.reduce((s, o) => s + (o.counts?.[n] ?? 0), 0)]));
  const failed = outcomes.filter((o) => !o.ok);
  const lines = [
    '',
    ...failed.map((o) => `✖ failed: ${o.files.join(' ')}${o.counts ? '' : ' (no report: the process ended before its summary)'}`),
    `ℹ files ${files.length} in ${outcomes.length} processes`,
    ...COUNTS.map((n) => `ℹ ${n} ${total[n]}`),
    `ℹ duration_ms ${(performance.now() - started).toFixed(0)}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return failed.length === 0 ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const c of children) c.kill(signal);
    globalTeardown();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

process.exitCode = await main();
