// Liveness answers as long as the process serves; readiness also proves the database answers.
import type { FastifyInstance } from 'fastify';
import { ping } from '../db/database.ts';
import type { Deps } from './context.ts';
import { AppError } from '../lib/errors.ts';

export function healthRoutes(deps: Deps, checks: Array<() => Promise<void>> = []) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (request) => {
      try {
        await ping(deps.db);
        for (const check of checks) await check();
      } catch (err) {
        request.log.warn({ err }, 'not ready');
        throw new AppError('service_unavailable', 'A dependency of the service is not reachable.');
      }
      return { status: 'ready' };
    });
  };
}
