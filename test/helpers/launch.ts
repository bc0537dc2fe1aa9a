// Starting the server the ways an operator does (npm start, npx, bin/rolodex.js under an older
// Node, node directly), and watching every process of it, for the start-and-stop tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/rolodex.js', import.meta.url));
/** PATH with the project's Node 24 first, as the README asks. */
export const PATH = `${ROOT}node_modules/.bin:${process.env.PATH ?? ''}`;

export interface Launched {
  child: ChildProcess;
  output: () => string;
  /** Every server process (primary and workers) that has logged a line. */
  pids: () => number[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function launch(command: string, args: string[], env: Record<string, string>, opts: { detached?: boolean } = {}): Launched {
  let out = '';
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH, HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', LOG_LEVEL: 'info', WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, pids: () => [...new Set([...out.matchAll(/"pid":(\d+)/g)].map((m) => Number(m[1])))], exited };
}

export async function until(what: string, check: () => boolean, ms: number, output: () => string): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`${what} not within ${ms} ms:\n${output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Kills whatever is left of a launch, when a test failed half-way. */
export function cleanUp(l: Launched | undefined): void {
  for (const pid of l?.pids() ?? []) if (alive(pid)) process.kill(pid, 'SIGKILL');
  if (l && l.child.exitCode === null && l.child.signalCode === null) l.child.kill('SIGKILL');
}

/**
 * A request in flight: headers and half of a JSON body sent now, the rest on `finish()`, which
 * resolves with the status and body the server answered.
 */
export function halfSentRequest(url: string, headers: Record<string, string>, body: string): { finish(): Promise<{ status: number; body: string }> } {
  const bytes = Buffer.from(body);
  const req = request(url, {
    method: 'POST',
    agent: false,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(bytes.length) },
  });
  const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += String(d)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
  });
  req.write(bytes.subarray(0, 5));
  return {
    finish: () => {
      req.end(bytes.subarray(5));
      return answered;
    },
  };
}
