// Prometheus metrics. Each app has its own Registry (never prom-client's global one), so that
// several apps in one test process do not collide. Labels are bounded: the operation name or
// route pattern, never a raw URL, an id or a workspace. src/http/metrics.ts counts requests into
// it and serves /metrics; cluster.ts sums the workers' registries.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'operation' | 'method' | 'status'>;
  duration: Histogram<'operation'>;
  rateLimited: Counter<'operation' | 'category'>;
  redisFallbacks: Counter;
  redisUp: Gauge;
  /** For the files code: bytes received by uploads. */
  uploadBytes: Counter<'storage'>;
  /** For the files code: how long one upload's bytes took to arrive and be stored. */
  uploadDuration: Histogram<'storage'>;
  /** For the mail dispatcher: messages the transport accepted. */
  emailDeliveries: Counter<'transport'>;
  /** For the mail dispatcher: attempts that failed, `final` when the message is given up. */
  emailFailures: Counter<'transport' | 'final'>;
  /** Replaces this registry as the source of /metrics: a cluster worker answers with all workers' sum. */
  text?: () => Promise<string>;
}

export function createMetrics(opts: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  // Event-loop lag sampled every 100 ms rather than prom-client's 10: each sample wakes the process,
  // and an idle process that wakes often takes processor time from its neighbours (docs/performance.md
  // §Event-loop lag sampled every 100 ms). Stalls of 100 ms or more are all still seen; shorter ones
  // in proportion to their length.
  if (opts.defaults !== false) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  return {
    registry,
    requests: new Counter({
      name: 'rolodex_http_requests_total',
      help: 'Requests by operation (or route) and status.',
      labelNames: ['operation', 'method', 'status'],
      registers,
    }),
    duration: new Histogram({
      name: 'rolodex_http_request_duration_seconds',
      help: 'Time from request to response, by operation (or route).',
      labelNames: ['operation'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    rateLimited: new Counter({
      name: 'rolodex_rate_limited_total',
      help: 'Requests refused with 429 rate_limited.',
      labelNames: ['operation', 'category'],
      registers,
    }),
    redisFallbacks: new Counter({
      name: 'rolodex_rate_limit_redis_fallback_total',
      help: 'Rate-limit decisions made without an answer from Redis: unreachable or silent (local buckets), or late (the level it last reported).',
      registers,
    }),
    redisUp: new Gauge({
      name: 'rolodex_rate_limit_redis_up',
      help: '1 while the shared rate-limit store (Redis) is reachable.',
      registers,
      aggregator: 'min',
    }),
    uploadBytes: new Counter({ name: 'rolodex_upload_bytes_total', help: 'Bytes received by file uploads.', labelNames: ['storage'], registers }),
    uploadDuration: new Histogram({
      name: 'rolodex_upload_duration_seconds',
      help: 'Duration of file uploads, from the first byte to stored.',
      labelNames: ['storage'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900],
      registers,
    }),
    emailDeliveries: new Counter({
      name: 'rolodex_email_deliveries_total',
      help: 'E-mails handed to the mail transport and accepted (log: written to the log only).',
      labelNames: ['transport'],
      registers,
    }),
    emailFailures: new Counter({
      name: 'rolodex_email_delivery_failures_total',
      help: 'Failed delivery attempts; final="true" when the e-mail is given up, else it is retried later.',
      labelNames: ['transport', 'final'],
      registers,
    }),
  };
}

/** For the files code: one finished upload. */
export function recordUpload(metrics: Metrics | undefined, bytes: number, seconds: number, storage = 'local'): void {
  metrics?.uploadBytes.inc({ storage }, bytes);
  metrics?.uploadDuration.observe({ storage }, seconds);
}

/** How long a scrape waits for a gauge read from the database. */
export const DATABASE_GAUGE_MS = 1000;

/**
 * A gauge read from the database at each scrape (docs/deploy.md §Health checks and metrics). A
 * database that fails the read, or does not answer it within DATABASE_GAUGE_MS, leaves the gauge
 * without a sample (unknown, where a value would be a guess) and the rest of the scrape as it is:
 * /metrics matters most during an outage, and a read held for the statement's deadline would
 * outlast the scraper's timeout. No sample rather than NaN, which a cluster's workers hand their
 * primary as JSON, where it becomes null and sums to 0. Every worker of a cluster reads the same
 * database: the sum would count each row N times, so their values are combined by the maximum.
 */
class DatabaseGauge extends Gauge {
  readonly #read: () => Promise<number>;

  constructor(metrics: Metrics, name: string, help: string, read: () => Promise<number>) {
    super({ name, help, registers: [metrics.registry], aggregator: 'max' });
    this.#read = read;
  }

  override async get(): ReturnType<Gauge['get']> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, DATABASE_GAUGE_MS, undefined)));
    const value = await Promise.race([this.#read().catch(() => undefined), late]).finally(() => clearTimeout(timer));
    if (value === undefined) return { ...(await super.get()), values: [] };
    this.set(value);
    return super.get();
  }
}

export function databaseGauge(metrics: Metrics, name: string, help: string, read: () => Promise<number>): void {
  new DatabaseGauge(metrics, name, help, read);
}
