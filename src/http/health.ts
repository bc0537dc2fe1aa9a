// Liveness answers as long as the process serves; readiness also proves the database answers.
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Deps } from './context.ts';
import { AppError } from '../lib/errors.ts';

export function healthRoutes(deps: Deps, checks: Array<() => Promise<void>> = []) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/healthz', { schema: { hide: true } as object }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } as object }, async (request) => {
      try {
        await sql`select 1`.execute(deps.db.kysely);
        for (const check of checks) await check();
      } catch (err) {
        request.log.warn({ err }, 'not ready');
        throw new AppError('service_unavailable', 'A dependency of the service is not reachable.');
      }
      return { status: 'ready' };
    });
  };
}
