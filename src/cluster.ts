// `rolodex serve --workers N`: N worker processes share one port (node:cluster). The primary
// probes the port and migrates the database once before forking, keeps the rate-limit buckets
// that all workers share when there is no Redis (and while Redis is down), sums the workers'
// metrics, relays the workers' commit signals to each other (src/db/sqlite/signals.ts), replaces
// a worker that dies (waiting longer each time workers die young), and on SIGTERM/SIGINT/SIGHUP stops
// every worker gracefully before exiting (docs/deploy.md §Start and stop).
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.ts';
import { openDataDirWarning } from './data-dir.ts';
import { ListenError, probePort, STOP_TIMEOUT_MS, stopWhileStarting } from './lifecycle.ts';
import { serveClusterMetrics } from './metrics/cluster.ts';
import { serveClusterRateLimits } from './rate-limit/cluster.ts';
import { createLogger } from './logger.ts';
import { openDatabase } from './runtime.ts';
import { prepareServerDatabase } from './server-deps.ts';
import { relayClusterSignals } from './db/index.ts';

const WORKER_ENTRY = fileURLToPath(new URL('./cluster-worker.ts', import.meta.url));
/** A worker that lived this long counts as healthy: the next replacement waits the least again. */
const HEALTHY_MS = 30_000;
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;

export interface ClusterHandle {
  /** Resolves with the port once every worker listens; rejects (after stopping them) when the port cannot be bound. */
  ready: Promise<number>;
  stop(): Promise<void>;
}

interface WorkerMessage {
  rolodex?: string;
  port?: number;
  message?: string;
}

/** `env` is the environment the configuration was read from; every worker reads it again. */
export async function runCluster(config: Config, env: Record<string, string | undefined>): Promise<ClusterHandle> {
  const logger = createLogger(config.logLevel);
  const started = stopWhileStarting(logger);
  await probePort(config.port, config.host);
  const db = await openDatabase(config, logger);
  const open = openDataDirWarning(config.dataDir);
  if (open) logger.warn(open);
  try {
    await prepareServerDatabase(db, config);
  } finally {
    await db.close();
  }

  serveClusterRateLimits(cluster);
  serveClusterMetrics(cluster);
  relayClusterSignals(cluster);
  cluster.setupPrimary({ exec: WORKER_ENTRY, args: [] });

  let stopping = false;
  let listening = 0;
  let delay = 0;
  let settled = false;
  let settle: { resolve: (port: number) => void; reject: (err: Error) => void } = { resolve: () => {}, reject: () => {} };
  const ready = new Promise<number>((resolve, reject) => (settle = { resolve, reject }));
  const workerEnv = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  const fork = (): Worker => {
    const worker = cluster.fork(workerEnv);
    const bornAt = Date.now();
    worker.on('message', (m: WorkerMessage) => {
      if (m?.rolodex === 'worker-failed' && m.message) void fail(new ListenError(m.message));
      if (m?.rolodex !== 'worker-listening' || settled || ++listening < config.workers) return;
      settled = true;
      const where = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${m.port ?? config.port}`;
      logger.info(
        { workers: config.workers, address: where, database: config.databaseUrl ? 'postgres' : 'sqlite', dataDir: config.dataDir },
        `rolodex listening on ${where} with ${config.workers} workers`,
      );
      settle.resolve(m.port ?? config.port);
    });
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      delay = Date.now() - bornAt >= HEALTHY_MS ? FIRST_DELAY_MS : Math.min(MAX_DELAY_MS, Math.max(FIRST_DELAY_MS, delay * 2));
      // "pid" is the primary's (the logger's base): the dead worker has a key of its own.
      logger.error({ workerPid: worker.process.pid, code, signal, delayMs: delay }, `worker died; starting another in ${delay / 1000} s`);
      setTimeout(() => !stopping && fork(), delay);
    });
    return worker;
  };
  for (let i = 0; i < config.workers; i++) fork();

  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    logger.info({ workers: workers.length }, 'stopping workers');
    const force = setTimeout(() => {
      logger.error('workers took too long to stop; killing them');
      for (const w of workers) w.process.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.process.kill('SIGTERM');
          }),
      ),
    );
    clearTimeout(force);
    logger.info('all workers stopped');
  };
  // A port that cannot be bound will not become free by retrying: stop, and say why once.
  const fail = async (err: ListenError): Promise<void> => {
    if (stopping) return;
    await stop();
    if (!settled) {
      settled = true;
      settle.reject(err);
    } else {
      logger.error(err.message);
      process.exit(1);
    }
  };
  const onSignal = (signal: string) => {
    if (stopping) return;
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error while stopping workers');
        process.exit(1);
      },
    );
  };
  started(onSignal);
  return { ready, stop };
}
