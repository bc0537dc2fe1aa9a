// What a server opens beside the database and the blob store of src/runtime.ts: the authenticator,
// the metrics, the rate limiter, and what it sets up in the database before it answers. Only
// `rolodex serve` loads this file.
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { Authenticator } from './auth/authenticator.ts';
import { forServing, openDb, type Db } from './db/index.ts';
import type { Deps } from './http/context.ts';
import { createMetrics } from './metrics/registry.ts';
import { clusterMetricsText } from './metrics/cluster.ts';
import { createRateLimiter } from './rate-limit/factory.ts';
import { prepareCreationLog } from './enrichment/creation.ts';
import { openBlobStore, openDatabase } from './runtime.ts';

/**
 * What a server (not the CLI, not a cluster's worker) sets up in the migrated database before it
 * answers: with ENRICHMENT=on-create the change log's cursor of the creation runs starts at the
 * log's end unless a runner keeps it; other modes leave it to the on-create instances that may
 * share the database (docs/enrichment.md §Runs).
 */
export async function prepareServerDatabase(db: Db, config: Config): Promise<void> {
  await prepareCreationLog(db.kysely, config.enrichment.mode);
}

/** `worker`: a cluster worker, whose primary has migrated already and keeps the local rate limits. */
export async function openDeps(config: Config, logger: Logger, opts: { worker?: boolean } = {}): Promise<Deps> {
  const statementTimeoutMs = config.databaseStatementTimeoutMs;
  const db = opts.worker
    ? openDb({
        dataDir: config.dataDir,
        ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
        statementTimeoutMs,
        connectTimeoutMs: config.databaseConnectTimeoutMs,
      })
    : await openDatabase(config, logger, { statementTimeoutMs });
  await forServing(db);
  if (!opts.worker) await prepareServerDatabase(db, config);
  const metrics = createMetrics();
  if (opts.worker) metrics.text = clusterMetricsText(metrics.registry);
  const rateLimiter = await createRateLimiter(config, logger, { metrics, worker: opts.worker ?? false });
  return { db, logger, auth: new Authenticator(db), metrics, blobs: await openBlobStore(config), ...(rateLimiter ? { rateLimiter } : {}) };
}

export async function closeDeps(deps: Deps): Promise<void> {
  await deps.rateLimiter?.close();
  await deps.blobs.close();
  await deps.db.close();
}
