// Starting the real server as a child process, for tests where the process itself matters
// (start-up, signals, crashes, several instances).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { get } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/rolodex.js', import.meta.url));

/** Listens on 127.0.0.1 on a free port; `close` refuses new connections and cuts those it holds. */
export async function listening(server: Server): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `rolodex serve` on a free port. The port is free when chosen but another test process
 * may take it before the server binds it, so an early exit with EADDRINUSE is retried, and the
 * server counts as started only once it logged that it listens on that port. A variable of `env`
 * that is undefined is left out of the server's environment.
 */
export async function startServerProcess(env: Record<string, string | undefined>, args: string[] = []): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, args);
    } catch (err) {
      if (attempt >= 3 || !String((err as Error).message).includes('EADDRINUSE')) throw err;
    }
  }
}

/**
 * One probe on a connection of its own, closed after it. Through fetch, the probe's socket would
 * stay in fetch's pool; a test that then blocks (spawnSync of the CLI) past the server's keep-alive
 * timeout would send its next request on a socket the server has just closed ("other side closed").
 */
function healthy(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    }).on('error', () => resolve(false));
  });
}

async function startOnce(env: Record<string, string | undefined>, args: string[]): Promise<ServerProcess> {
  const port = await freePort();
  let out = '';
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => (out += String(d)));
  child.stderr?.on('data', (d) => (out += String(d)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Generous: under a loaded machine (the whole suite on 2 cores) a cold start can take many seconds.
  const deadline = Date.now() + 90_000;
  // Another test's server may take the port first and answer the probe: only once this child
  // says it listens on the port is the answer its own.
  const listening = new RegExp(`rolodex listening on \\S*:${port}\\b`);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`);
    if (listening.test(out) && (await healthy(`${baseUrl}/healthz`))) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    baseUrl,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the CLI to completion; returns its exit code and output. */
export function rolodexCli(env: Record<string, string>, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
