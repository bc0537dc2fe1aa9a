// /metrics, and the request counters behind it (the registry itself: src/metrics/registry.ts).
import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import type { Metrics } from '../metrics/registry.ts';
import type { Deps } from './context.ts';

function poolGauges(deps: Deps, metrics: Metrics): void {
  const pool = deps.db.pool;
  if (!pool) return;
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      collect() {
        this.set(read());
      },
    });
  // Queries outside transactions go over the pipelined connection kept for them, or, scans, over
  // the scan lane's; transactions take a connection of their own from the rest. Transactions and
  // scans are what can run out of connections.
  gauge('rolodex_db_pool_connections', 'PostgreSQL connections the pool may open.', () => pool.size);
  gauge('rolodex_db_pool_transactions', 'PostgreSQL transactions holding a connection (at most the pool less its pipelined and scan connections).', () =>
    pool.transactions(),
  );
  gauge('rolodex_db_pool_waiting', 'PostgreSQL transactions waiting for a connection.', () => pool.waiting());
  if (pool.scans && pool.scansWaiting) {
    gauge('rolodex_db_pool_scans', 'PostgreSQL scans (filtered listings) running on the scan connections.', () => pool.scans?.() ?? 0);
    gauge('rolodex_db_pool_scans_waiting', 'PostgreSQL scans waiting for a scan connection.', () => pool.scansWaiting?.() ?? 0);
  }
}

/** Counts every response and serves /metrics. */
export function installMetrics(app: FastifyInstance, deps: Deps, metrics: Metrics): void {
  poolGauges(deps, metrics);
  // Label sets are few (operation × method × status); binding each once spares prom-client
  // validating and hashing the labels on every response.
  const bound = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  app.addHook('onResponse', (request, reply, done) => {
    const config = request.routeOptions.config;
    const operation = config.operation ?? request.routeOptions.url ?? 'not_found';
    const status = reply.statusCode;
    const key = `${operation} ${request.method} ${status}`;
    let children = bound.get(key);
    if (!children) {
      children = { count: metrics.requests.labels({ operation, method: request.method, status }), time: metrics.duration.labels({ operation }) };
      bound.set(key, children);
    }
    children.count.inc();
    children.time.observe(reply.elapsedTime / 1000);
    if (status === 429 && config.category) metrics.rateLimited.inc({ operation, category: config.category });
    done();
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const body = metrics.text ? await metrics.text() : await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
}
