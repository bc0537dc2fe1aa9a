// `rolodex import` as a child process for the import benches (bench/import.ts,
// bench/import-memory.ts, bench/import-sharing.ts): its stdout, its wall time, and what /proc says
// of it while it runs (Linux): CPU seconds (user + system), the part of its cost a loaded machine
// does not inflate, and its peak resident set (VmHWM).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { cpuMs } from './proc-cpu.ts';

export interface ImportRun {
  code: number;
  out: string;
  seconds: number;
  /** CPU seconds, as last read. */
  cpu: number;
  /** Peak resident memory, MiB. */
  peakMiB: number;
}

/**
 * Starts `node [nodeArgs] main import argv… --json` with `env` as its whole environment; the
 * answer once it exited. /proc is read every `everyMs`.
 */
export function runImport(
  main: string,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  opts: { nodeArgs?: readonly string[]; everyMs?: number } = {},
): Promise<ImportRun> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), main, 'import', ...argv, '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  let cpu = NaN;
  let peakMiB = NaN;
  const poll = setInterval(() => {
    try {
      const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]);
      if (kb > 0) peakMiB = Math.max(Number.isNaN(peakMiB) ? 0 : peakMiB, kb / 1024);
      const ms = cpuMs(child.pid!);
      if (ms > 0) cpu = ms / 1000;
    } catch {
      // gone, or not Linux
    }
  }, opts.everyMs ?? 250);
  return (once(child, 'exit') as Promise<[number]>).then(([code]) => {
    clearInterval(poll);
    return { code, out, seconds: (performance.now() - t0) / 1000, cpu, peakMiB };
  });
}
