// The probes (docs/deploy.md §Probes). Liveness (/healthz) answers while the process can serve: it
// fails only when the process is stuck in a way a restart mends, a pool whose transactions have
// waited for a connection far longer than any statement may take; a database that is down does
// not fail it, since restarting would not bring the database back. An event loop that is wedged
// cannot answer at all, which the orchestrator's probe timeout sees. Readiness (/readyz) also
// proves, within a deadline, that the database answers a trivial query and the blob store is
// there: it never waits longer than READINESS_TIMEOUT_MS.
import type { FastifyInstance } from 'fastify';
import { ping } from '../db/index.ts';
import type { Deps } from './context.ts';
import { meetFault } from './error-handler.ts';
import { AppError } from '../lib/errors.ts';

export interface HealthOptions {
  /** How long /readyz waits for its checks. */
  readinessTimeoutMs: number;
  /** A transaction waiting this long for a connection makes /healthz fail. */
  stallMs: number;
}

const DEFAULTS: HealthOptions = { readinessTimeoutMs: 2000, stallMs: 30_000 };

/** A readiness check that did not answer in time: `what` names it. */
function late(what: string, ms: number): Error {
  return Object.assign(new Error(`${what} did not answer within ${ms} ms`), { code: 'READINESS_TIMEOUT' });
}

/** Runs the checks in turn; fails naming the one still running after `ms`. */
function within(ms: number, checks: [string, () => Promise<void>][]): Promise<void> {
  let running = checks[0]?.[0] ?? '';
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(late(running, ms)), ms);
  });
  const work = (async () => {
    for (const [what, check] of checks) {
      running = what;
      await check();
    }
  })();
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A check that did not answer in time: no bug, though no request's fault either. */
function readinessTimeout(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'READINESS_TIMEOUT';
}

const unavailable = (message: string) => new AppError('service_unavailable', message, { headers: { 'Retry-After': '1' } });

/** `checks`: what /readyz asks besides the database, each by the name its log line gives it. */
export function healthRoutes(deps: Deps, checks: Record<string, () => Promise<void>> = {}, options: Partial<HealthOptions> = {}) {
  const opts = { ...DEFAULTS, ...options };
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/healthz', { schema: { hide: true } }, async (request) => {
      const stalled = deps.db.pool?.oldestWaitMs?.() ?? 0;
      if (stalled > opts.stallMs) {
        request.log.error({ stalledMs: Math.round(stalled) }, 'the database pool is stalled');
        throw unavailable('The service is stalled; it needs a restart.');
      }
      return { status: 'ok' };
    });
    app.get('/readyz', { schema: { hide: true } }, async (request) => {
      try {
        await within(opts.readinessTimeoutMs, [['the database', () => ping(deps.db)], ...Object.entries(checks)]);
      } catch (err) {
        // An operational fault (the database's or the blob store's outage, a check that did not
        // answer in time, a blob store this deployment's settings cannot use) is logged once for
        // all the probes it fails (docs/reliability.md §Operational faults in the log); anything
        // else is a bug, logged with its stack.
        if (!meetFault(err, request)) {
          if (readinessTimeout(err)) request.server.faults.readiness.met(err, request.log);
          else request.log.warn({ err }, 'not ready');
        }
        throw unavailable('A dependency of the service is not reachable.');
      }
      return { status: 'ready' };
    });
  };
}
