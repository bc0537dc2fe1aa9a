// The life of a server process (docs/deploy.md §Start and stop): binding the port, and saying so
// in one line when that cannot be done (a port in use is an operator's mistake, not a crash); the
// signals that stop it and how long a stop may take; and stopping with the wrapper that started it.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { InputError } from './lib/errors.ts';
import { everyInterface } from './config.ts';

/** The port cannot be bound; the message is the whole story, printed as one line. */
export class ListenError extends InputError {
  override name = 'ListenError';
}

/** A ListenError for the errors that mean the port cannot be had, else the error itself. */
export function listenError(err: unknown, port: number, host: string): Error {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'EADDRINUSE') return new ListenError(`port ${port} on ${host} is already in use`, 'PORT');
  if (code === 'EACCES') return new ListenError(`port ${port} on ${host} needs privileges this user does not have`, 'PORT');
  if (code === 'EADDRNOTAVAIL') return new ListenError(`address ${host} is not one of this machine's (HOST)`, 'HOST');
  // A HOST name the resolver does not know, or cannot reach (a typo, no DNS): the name is the mistake.
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL')
    return new ListenError(`address ${host} does not resolve to an address of this machine (HOST; ${code})`, 'HOST');
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Binds and releases the port at once, before anything slow (migrations, workers) starts, so a
 * port in use is reported within a second. The real bind can still fail if another process takes
 * the port in between; that failure is reported the same way.
 */
export async function probePort(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError(err, port, host)));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** How long a stop may take before the process exits anyway. */
export const STOP_TIMEOUT_MS = 10_000;
// SIGHUP (a terminal that closes, an SSH session that ends) stops the server as SIGTERM does, so
// that its requests in flight are answered: its default action ends the process at once, and Node
// sets SIGHUP back to that default at start, so `nohup` never keeps a Node process from it
// (docs/deploy.md §Start and stop).
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * Until a server's own stop is set up (once it listens), a stop signal ends its start: waiting for
 * a database that does not answer, or migrating. The process exits at once with code 0, as a stop
 * does, after one line saying so, so that the operator reads why it ended. Whatever the start had
 * under way in the database is a transaction that never commits. Returns the function that hands
 * the signals over to the server's own stop, called once it listens. It adds that stop before it
 * removes this handler: a signal with no listener left is no longer watched, and one that arrived
 * while the start still ran synchronously (a migration on SQLite), not yet dispatched, would be
 * dropped with it, leaving the server running after the operator stopped it.
 */
export function stopWhileStarting(logger: Logger): (stop: (signal: NodeJS.Signals) => void) => void {
  const handler = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'stopped before the server was ready');
    process.exit(0);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, handler);
  return (stop) => {
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
    for (const signal of STOP_SIGNALS) process.off(signal, handler);
  };
}

/** How often a process started by a wrapper checks that the wrapper is still there. */
const PARENT_CHECK_MS = 500;

/** The parent of process `pid` (Linux's /proc), or undefined where that cannot be read. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid` is the shell a package manager runs a script with: it sets
 * `npm_lifecycle_event` in the script's environment, not in its own. Undefined where that cannot
 * be read.
 */
function isScriptShell(pid: number): boolean | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1')
      .split('\0')
      .some((v) => v.startsWith('npm_lifecycle_event='));
  } catch {
    return undefined;
  }
}

/**
 * Under a wrapper (npm start, npx, bin/rolodex.js re-running itself under Node 24) the process
 * stops, as on SIGTERM, when the wrapper is gone: a wrapper killed with SIGKILL, or a shell
 * between npm and Node that dies of the signal npm forwards, must not leave it running. Under npm
 * the shell npm runs the command with may stay between them (`npx`): then npm, the shell's
 * parent, is watched too. When npm is the parent (`npm start` execs its command), what started
 * npm is not watched: a script that ends after starting it leaves the server serving. A process
 * started directly (systemd, a container, a shell) is left alone (docs/deploy.md §Start and stop).
 */
export function watchParent(env: Record<string, string | undefined>): void {
  if (env.ROLODEX_WATCH_PARENT !== '1' && !env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const grandparent = env.npm_lifecycle_event && isScriptShell(parent) !== false ? parentOf(parent) : undefined;
  const timer = setInterval(() => {
    if (process.ppid === parent && (grandparent === undefined || parentOf(parent) === grandparent)) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, PARENT_CHECK_MS);
  timer.unref();
}

/**
 * Where running servers note their addresses, for `rolodex demo` run with the same DATA_DIR: one
 * file per process (`<pid>.json`), so that a second server on the same DATA_DIR (on another
 * port) adds its own instead of replacing the first's, and the first is still found once the
 * second stops. A server that cannot listen notes nothing.
 */
const ADDRESS_DIR = 'servers';

/** Whether process `pid` is still running. */
function running(pid: unknown): boolean {
  try {
    return typeof pid === 'number' && process.kill(pid, 0);
  } catch {
    return false;
  }
}

/** The noted servers of this DATA_DIR, the earliest noted first; with `dead`, the files of stopped ones. */
function noted(dataDir: string): { alive: { url: string; at: number }[]; dead: string[] } {
  const dir = join(dataDir, ADDRESS_DIR);
  const out = { alive: [] as { url: string; at: number }[], dead: [] as string[] };
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return out;
  }
  for (const name of names) {
    const file = join(dir, name);
    try {
      const { pid, url } = JSON.parse(readFileSync(file, 'utf8')) as { pid: unknown; url: unknown };
      if (running(pid) && typeof url === 'string') out.alive.push({ url, at: statSync(file).mtimeMs });
      else out.dead.push(file);
    } catch {
      // Being written or removed at this moment, or not a note: not a running server's.
    }
  }
  out.alive.sort((x, y) => x.at - y.at);
  return out;
}

/** Notes the address this process serves on (every interface's is reached through 127.0.0.1) until it exits. */
export function noteAddress(dataDir: string, host: string, port: number): void {
  const reach = everyInterface(host) ? '127.0.0.1' : host;
  const url = `http://${reach.includes(':') ? `[${reach}]` : reach}:${port}`;
  const dir = join(dataDir, ADDRESS_DIR);
  const file = join(dir, `${process.pid}.json`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The notes of servers that stopped without removing theirs (killed) go first.
    for (const dead of noted(dataDir).dead) rmSync(dead, { force: true });
    writeFileSync(file, JSON.stringify({ pid: process.pid, url }) + '\n');
    process.once('exit', () => {
      try {
        rmSync(file, { force: true });
      } catch {
        // Left behind, it names a stopped process: the next server removes it, `demo` skips it.
      }
    });
  } catch {
    // Only a convenience for `rolodex demo`: a read-only DATA_DIR serves as well.
  }
}

/** The address of a server running on this DATA_DIR, if one is: the one noted first. */
export function runningServerUrl(dataDir: string): string | undefined {
  return noted(dataDir).alive[0]?.url;
}
