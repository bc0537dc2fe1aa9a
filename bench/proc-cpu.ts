// CPU time of the server's processes and of the PostgreSQL backends serving them, read from /proc
// (Linux only): what a request cost, which moves less with the machine's load than its latency.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** utime + stime of a process, in ms (clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

/** The server and its worker processes. */
export function family(pid: number): number[] {
  const pids = [pid];
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) pids.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** PostgreSQL backends whose client is one of `pids`, matched by the client's port. */
export function backends(pids: number[]): number[] {
  const mine = new Set(pids);
  const ports = new Set<string>();
  const byPort = new Map<string, number>();
  for (const line of execFileSync('ss', ['-tnpH'], { encoding: 'utf8' }).split('\n')) {
    const m = /127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:(\d+)\s+users:\(\("[^"]*",pid=(\d+)/.exec(line);
    if (!m) continue;
    if (m[2] === '5432' && mine.has(Number(m[3]))) ports.add(m[1]!);
    if (m[1] === '5432') byPort.set(m[2]!, Number(m[3]));
  }
  return [...ports].flatMap((p) => byPort.get(p) ?? []);
}
