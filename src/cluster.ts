// `rolodex serve --workers N`: N worker processes share one port (node:cluster). The primary
// migrates the database once before forking, keeps the rate-limit buckets that all workers share
// when there is no Redis (and while Redis is down), sums the workers' metrics, replaces a worker
// that dies, and on SIGTERM/SIGINT stops every worker gracefully before exiting.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.ts';
import { serveClusterMetrics } from './metrics/cluster.ts';
import { serveClusterRateLimits } from './rate-limit/cluster.ts';
import { createLogger } from './logger.ts';
import { openDatabase } from './runtime.ts';

const WORKER_ENTRY = fileURLToPath(new URL('./cluster-worker.ts', import.meta.url));
const STOP_TIMEOUT_MS = 15_000;

export interface ClusterHandle {
  /** Resolves once every worker listens. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/** `env` is the environment the configuration was read from; every worker reads it again. */
export async function runCluster(config: Config, env: Record<string, string | undefined>): Promise<ClusterHandle> {
  const logger = createLogger(config.logLevel);
  const db = await openDatabase(config, logger);
  await db.close();

  serveClusterRateLimits(cluster);
  serveClusterMetrics(cluster);
  cluster.setupPrimary({ exec: WORKER_ENTRY, args: [] });

  let stopping = false;
  let listening = 0;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const workerEnv = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  const fork = (): Worker => {
    const worker = cluster.fork(workerEnv);
    worker.on('message', (m: unknown) => {
      if ((m as { rolodex?: string })?.rolodex !== 'worker-listening') return;
      if (++listening === config.workers) {
        logger.info(
          { workers: config.workers, port: config.port, host: config.host },
          `rolodex listening on ${config.host}:${config.port} with ${config.workers} workers`,
        );
        markReady();
      }
    });
    return worker;
  };
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
    setTimeout(() => !stopping && fork(), 1000).unref();
  });
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
  const onSignal = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error while stopping workers');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  return { ready, stop };
}
