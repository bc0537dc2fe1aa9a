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
import { faultOf } from './error-handler.ts';
import { AppError } from '../lib/errors.ts';

export interface HealthOptions {
  /** How long /readyz waits for its checks. */
  readinessTimeoutMs: number;
  /** A transaction waiting this long for a connection makes /healthz fail. */
  stallMs: number;
}

const DEFAULTS: HealthOptions = { readinessTimeoutMs: 2000, stallMs: 30_000 };

function within(ms: number, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const unavailable = (message: string) => new AppError('service_unavailable', message, { headers: { 'Retry-After': '1' } });

export function healthRoutes(deps: Deps, checks: Array<() => Promise<void>> = [], options: Partial<HealthOptions> = {}) {
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
        await within(
          opts.readinessTimeoutMs,
          (async () => {
            await ping(deps.db);
            for (const check of checks) await check();
          })(),
        );
      } catch (err) {
        // An operational fault (the database's or the blob store's outage) is logged once for all
        // the requests it fails (docs/reliability.md §Operational faults in the log).
        const fault = faultOf(err);
        if (fault) request.server.faults[fault].met(err, request.log);
        else request.log.warn({ err }, 'not ready');
        throw unavailable('A dependency of the service is not reachable.');
      }
      return { status: 'ready' };
    });
  };
}
