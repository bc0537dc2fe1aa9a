// Faults for the fault suite (test/ops/faults.test.ts) and bench/faults.ts: an app on PostgreSQL whose
// connections carry an application name of their own, so that only its backends are terminated
// (other suites share the server); a driver that sends mixed requests over HTTP and records every
// answer; and a terminator that ends the app's backends as a failover, a restart or a pooler does.
import { createServer } from 'node:net';
import { setTimeout as wait } from 'node:timers/promises';
import pg from 'pg';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { openDb } from '../../src/db/database.ts';
import type { Db } from '../../src/db/types.ts';
import { buildTestApp, type TestApp, type TestAppOptions } from './app.ts';
import { listening } from './process.ts';
import { TEST_DATABASE_URL } from './services.ts';

export interface FaultApp {
  t: TestApp;
  db: Db;
  appName: string;
  base: string;
  close(): Promise<void>;
}

/** The app on PostgreSQL, listening on a free port, its connections named `appName`. */
export async function faultApp(
  opts: { databaseUrl?: (url: string) => string; env?: Record<string, string>; extra?: TestAppOptions['deps'] } = {},
): Promise<FaultApp> {
  const appName = `rolodex_fault_${Math.random().toString(36).slice(2, 10)}`;
  let db: Db | undefined;
  const t = await buildTestApp('postgres', {
    ...(opts.env ? { env: opts.env } : {}),
    deps: async (deps, config) => {
      const url = new URL(config.databaseUrl!);
      url.searchParams.set('application_name', appName);
      db = openDb({
        dataDir: config.dataDir,
        databaseUrl: opts.databaseUrl ? opts.databaseUrl(url.toString()) : url.toString(),
        statementTimeoutMs: config.databaseStatementTimeoutMs,
      });
      deps.db = db;
      deps.auth = new Authenticator(db);
      await opts.extra?.(deps, config);
    },
  });
  const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    t,
    db: db!,
    appName,
    base,
    close: async () => {
      await t.close();
      await db!.close();
    },
  };
}

/** Ends every backend of `appName` now; returns how many. */
export async function terminateBackends(appName: string): Promise<number> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  try {
    const r = await c.query('select count(*) filter (where pg_terminate_backend(pid)) as n from pg_stat_activity where application_name = $1', [appName]);
    return Number(r.rows[0].n);
  } finally {
    await c.end();
  }
}

/** Terminates the backends of `appName` every `everyMs` until stopped; resolves to the count of terminations. */
export function terminator(appName: string, everyMs: number): { stop(): Promise<number> } {
  let running = true;
  let total = 0;
  const loop = (async () => {
    while (running) {
      await wait(everyMs);
      if (running) total += await terminateBackends(appName).catch(() => 0);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return total;
    },
  };
}

/**
 * Holds `table` of `schema` locked against every other session (as a migration or a long
 * maintenance statement does) until released; `waiting` resolves once a statement of `appName`
 * waits for it.
 */
export async function lockTable(schema: string, table: string, appName: string): Promise<{ waiting(): Promise<void>; release(): Promise<void> }> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  await c.query('begin');
  await c.query(`lock table ${schema}.${table} in access exclusive mode`);
  return {
    waiting: async () => {
      for (;;) {
        // Inside a transaction the activity view is read once, then kept: it is read afresh each time.
        await c.query('select pg_stat_clear_snapshot()');
        const r = await c.query("select count(*) as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'", [appName]);
        if (Number(r.rows[0].n) > 0) return;
        await wait(20);
      }
    },
    release: async () => {
      await c.query('rollback');
      await c.end();
    },
  };
}

export interface Answer {
  route: string;
  status: number;
  ms: number;
  /** A 4xx/5xx in the documented shape: {"error": {code, requestId, …}}. */
  shaped: boolean;
  /** Names something internal: a SQLSTATE or driver code of a lost connection, an address. */
  leaks: boolean;
}

const LEAKS = /57P0\d|CONNECTION_(CLOSED|ENDED|DESTROYED)|ECONNREFUSED|127\.0\.0\.1:\d+|statusCode/;

async function send(base: string, secret: string, method: string, path: string, body: unknown, timeoutMs: number): Promise<Omit<Answer, 'route'>> {
  const started = performance.now();
  try {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01', ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let shaped = res.status < 400;
    if (!shaped) {
      try {
        const e = (JSON.parse(text) as { error?: { code?: unknown; requestId?: unknown } }).error;
        shaped = typeof e?.code === 'string' && typeof e.requestId === 'string';
      } catch {
        shaped = false;
      }
    }
    return { status: res.status, ms: performance.now() - started, shaped, leaks: LEAKS.test(text) };
  } catch {
    // No answer within timeoutMs (status 0).
    return { status: 0, ms: performance.now() - started, shaped: false, leaks: false };
  }
}

/**
 * `connections` loops, each sending one request after another for `seconds`: point reads of a
 * list, list pages, list creates and a readiness probe, in turn.
 */
export async function drive(
  base: string,
  secret: string,
  listId: string,
  opts: { seconds: number; connections: number; timeoutMs: number },
): Promise<Answer[]> {
  const routes: Array<[string, string, string, unknown]> = [
    ['GET /v1/lists/{id}', 'GET', `/v1/lists/${listId}`, undefined],
    ['GET /v1/lists', 'GET', '/v1/lists?limit=5', undefined],
    ['POST /v1/lists', 'POST', '/v1/lists', { fields: { $name: 'Fault', $objectType: 'account' } }],
    ['GET /readyz', 'GET', '/readyz', undefined],
  ];
  const out: Answer[] = [];
  const end = performance.now() + opts.seconds * 1000;
  await Promise.all(
    Array.from({ length: opts.connections }, async (_, c) => {
      for (let k = c; performance.now() < end; k++) {
        const [route, method, path, body] = routes[k % routes.length]!;
        out.push({ route, ...(await send(base, secret, method, path, body, opts.timeoutMs)) });
      }
    }),
  );
  return out;
}

export interface Figures {
  answered: number;
  ok: number;
  unavailable: number;
  other: Record<string, number>;
  unanswered: number;
  unshaped: number;
  leaks: number;
  longestMs: number;
  /** The route of the longest wait. */
  longestRoute: string;
}

export function figures(answers: Answer[]): Figures {
  const f: Figures = { answered: 0, ok: 0, unavailable: 0, other: {}, unanswered: 0, unshaped: 0, leaks: 0, longestMs: 0, longestRoute: '' };
  for (const a of answers) {
    if (a.ms > f.longestMs) [f.longestMs, f.longestRoute] = [Math.round(a.ms), `${a.route} ${a.status}`];
    if (a.status === 0) {
      f.unanswered++;
      continue;
    }
    f.answered++;
    if (a.status < 400) f.ok++;
    else if (a.status === 503) f.unavailable++;
    else f.other[a.status] = (f.other[a.status] ?? 0) + 1;
    if (!a.shaped) f.unshaped++;
    if (a.leaks) f.leaks++;
  }
  return f;
}

/** GETs `path` from the fault app's socket with `secret`, bounded by 15 s. */
export function getter(f: FaultApp, secret: string): (path: string) => Promise<Response> {
  return (path) =>
    fetch(f.base + path, { headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' }, signal: AbortSignal.timeout(15_000) });
}

/** The status of `GET /v1/lists` once it is 200, or the last after 100 tries 100 ms apart. */
export async function readsAgain(get: (path: string) => Promise<Response>): Promise<number> {
  let status = 0;
  for (let i = 0; i < 100 && status !== 200; i++) {
    status = (await get('/v1/lists')).status;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return status;
}

/** A TCP server on 127.0.0.1 that accepts connections and never writes a byte (a silent database). */
export function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  return listening(createServer());
}
