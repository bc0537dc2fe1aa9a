// Opening and closing what the server and the CLI share: the database (migrated) and the
// services built on it. Nothing here runs at import time.
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { Authenticator } from './auth/authenticator.ts';
import { openDb } from './db/database.ts';
import type { Db } from './db/types.ts';
import { migrate } from './db/migrate.ts';
import { takeMigrationNotes } from './db/migration-notes.ts';
import { refreshStatistics } from './db/statistics.ts';
import type { Deps } from './http/context.ts';
import { createMetrics } from './metrics/registry.ts';
import { clusterMetricsText } from './metrics/cluster.ts';
import { createRateLimiter } from './rate-limit/factory.ts';
import { createBlobStore } from './blobs/index.ts';
import type { BlobStore } from './blobs/blob-store.ts';

/**
 * The database, migrated. With `statementTimeoutMs` (the server's, on PostgreSQL) the migrations
 * run first on a connection without it, since building an index may take longer.
 */
export async function openDatabase(config: Config, logger?: Logger, opts: { writerThread?: boolean; statementTimeoutMs?: number } = {}): Promise<Db> {
  const { statementTimeoutMs, ...rest } = opts;
  const limited = Boolean(statementTimeoutMs && config.databaseUrl);
  const db = openDb({ dataDir: config.dataDir, ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}), ...rest });
  try {
    const applied = await migrate(db);
    if (applied.length > 0) logger?.info({ applied }, 'migrations applied');
    // What data migrations changed, and what they had to keep as it was (src/db/migration-notes.ts).
    for (const note of takeMigrationNotes()) logger?.info({ migration: note.migration, ...note.counts }, note.message);
    await refreshStatistics(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  if (!limited) return db;
  await db.close();
  return openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl!, statementTimeoutMs: statementTimeoutMs! });
}

/** S3 when configured, else local disk under DATA_DIR/blobs. */
export function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.s3) return createBlobStore({ kind: 's3', ...config.s3, spoolDir: config.dataDir });
  return createBlobStore({ kind: 'disk', dir: join(config.dataDir, 'blobs') });
}

/** `worker`: a cluster worker, whose primary has migrated already and keeps the local rate limits. */
export async function openDeps(config: Config, logger: Logger, opts: { worker?: boolean } = {}): Promise<Deps> {
  const statementTimeoutMs = config.databaseStatementTimeoutMs;
  const db = opts.worker
    ? openDb({ dataDir: config.dataDir, ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}), statementTimeoutMs })
    : await openDatabase(config, logger, { statementTimeoutMs });
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
