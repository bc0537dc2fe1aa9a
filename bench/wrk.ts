// The lighter load generator (BENCH_CLIENT=wrk): wrk, a C program from Debian's `wrk` package,
// in place of autocannon. On this 2-core machine the client shares the cores with the server,
// and autocannon takes about twice wrk's CPU per request (10–16 µs against 5–6 µs, November 28):
// what it takes is missing from a server with two workers, never from the one-process baseline,
// which needs a single core. docs/performance.md §How figures are measured.
//
// One thread and the same connections as autocannon; the request (method, headers, body, and the
// paths taken in turn) is set by a Lua script, the form wrk takes it in.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LoadOptions, Measurement } from './run.ts';

const run = promisify(execFile);

/** A Lua long string: none of the bench's paths, keys or bodies contains its closing bracket. */
function lua(s: string): string {
  if (s.includes(']==]')) throw new Error(`cannot quote ${s} for wrk's script`);
  return `[==[${s}]==]`;
}

function script(o: LoadOptions): string {
  const lines = [`wrk.method = ${lua(o.method ?? 'GET')}`];
  for (const [name, value] of Object.entries(o.headers ?? {})) lines.push(`wrk.headers[ ${lua(name)} ] = ${lua(value)}`);
  if (o.body !== undefined) lines.push(`wrk.body = ${lua(o.body)}`);
  if (o.paths) {
    lines.push(`local paths = { ${o.paths.map(lua).join(', ')} }`, 'local n, i = #paths, 0');
    lines.push('request = function()', '  i = i % n + 1', '  return wrk.format(nil, paths[i])', 'end');
  }
  return lines.join('\n') + '\n';
}

/** wrk prints a latency as a number and a unit (us, ms, s, m); in ms. */
function ms(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!m) throw new Error(`wrk latency ${text}`);
  const scale = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[m[2] as 'us' | 'ms' | 's' | 'm'];
  return Math.round(Number(m[1]) * scale * 100) / 100;
}

function parse(out: string): Measurement {
  const field = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`unexpected wrk output:\n${out}`);
    return m;
  };
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(field(/Requests\/sec:\s+([\d.]+)/)[1]),
    p50: ms(field(/^\s+50%\s+(\S+)$/m)[1] as string),
    p99: ms(field(/^\s+99%\s+(\S+)$/m)[1] as string),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: errors ? errors.slice(1).reduce((n, e) => n + Number(e), 0) : 0,
  };
}

/** One wrk measurement of `url` after a one-second warm-up, for `load` in bench/run.ts (which sets the headers). */
export async function wrkLoad(url: string, o: LoadOptions, seconds: number, connections: number): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-wrk-'));
  try {
    const file = join(dir, 'request.lua');
    writeFileSync(file, script(o));
    const args = (s: number) => ['-t1', `-c${connections}`, `-d${s}s`, '--latency', '-s', file, url];
    await run('wrk', args(1)).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new Error('BENCH_CLIENT=wrk needs wrk: apt-get install wrk') : err;
    });
    const { stdout } = await run('wrk', args(seconds));
    return parse(stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
