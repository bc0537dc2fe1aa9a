// The entry point: read the configuration, open the dependencies, listen, and shut down
// gracefully on SIGTERM/SIGINT/SIGHUP (stop accepting, let requests in flight finish, close the
// pools). The background jobs start only once the port is bound, so a server that cannot listen
// leaves nothing running (docs/deploy.md §Start and stop).
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { BlobDiskFaultError, BlobStoreMisconfiguredError, BlobStoreUnavailableError, type BlobStore } from './blobs/blob-store.ts';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { openDataDirWarning, prepareServing } from './data-dir.ts';
import { listenError, probePort, STOP_TIMEOUT_MS, stopWhileStarting } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import { closeDeps, openDeps } from './server-deps.ts';
import { filesEnv } from './files/service.ts';
import { startSweeper } from './jobs/sweeper.ts';
import { startMailDispatcher } from './jobs/mail-dispatcher.ts';
import { startWebhookDispatcher } from './jobs/webhook-dispatcher.ts';
import { createMailTransport } from './mail/index.ts';
import { installProcessGuards } from './process-guards.ts';
import { startEnrichmentRunner } from './jobs/enrichment.ts';
import { PROVIDERS, userAgent } from './enrichment/providers.ts';
import { shrinkHeap } from './lib/gc.ts';
import { causeOf } from './lib/errors.ts';

/**
 * A blob store that this deployment's settings cannot use (a bucket that does not exist, refused
 * credentials, a blob directory this process may not write) is said at start, in one line naming
 * the setting to fix, rather than first at an upload's complete. The server serves on: the rest of
 * the API needs no store, /readyz answers 503 until it is fixed, and a store that comes right needs
 * no restart (docs/deploy.md §Probes).
 * Not awaited: a store that does not answer delays no start.
 */
function checkBlobStore(blobs: BlobStore, logger: Logger): void {
  blobs.ping().then(
    () => {},
    (err: unknown) => {
      if (err instanceof BlobStoreMisconfiguredError || err instanceof BlobDiskFaultError) logger.error(err.message);
      else {
        // A store that cannot be reached is an operational fault: its code and reason, no stack
        // (docs/reliability.md §Operational faults in the log). Anything else keeps its stack.
        const cause = err instanceof BlobStoreUnavailableError ? causeOf(err) : { err };
        logger.warn(cause, 'the blob store did not answer at start; /readyz answers 503 until it does');
      }
    },
  );
}

/**
 * `worker`: one of the processes of `serve --workers N` (see src/cluster.ts). `checkBlobStore`:
 * this process checks the blob store at start (by default every server but a worker; in a
 * cluster, its first worker).
 */
export async function startServer(config: Config, opts: { worker?: boolean; checkBlobStore?: boolean } = {}): Promise<FastifyInstance> {
  prepareServing(config);
  const logger = createLogger(config.logLevel);
  installProcessGuards(logger);
  const started = stopWhileStarting(logger);
  // A worker's port is bound by the cluster's primary, which has probed it already.
  if (!opts.worker) await probePort(config.port, config.host);
  const deps = await openDeps(config, logger, opts);
  // Once, by the process that starts the server (a cluster's primary says it for its workers).
  const open = opts.worker ? undefined : openDataDirWarning(config.dataDir);
  if (open) logger.warn(open);
  let stopJobs = async (): Promise<void> => {};
  let app: FastifyInstance;
  try {
    app = await buildApp(config, deps);
  } catch (err) {
    await closeDeps(deps);
    throw err;
  }
  app.addHook('onClose', async () => {
    await stopJobs();
    await closeDeps(deps);
  });
  try {
    await app.ready();
    // Start-up grew the young generation to its largest, and an idle process never shrinks it:
    // given back once, before the port is bound so that no request waits on the pause, it grows
    // again with the first load (docs/performance.md §Idle memory and wake-ups).
    shrinkHeap();
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close();
    throw listenError(err, config.port, config.host);
  }
  if (opts.checkBlobStore ?? !opts.worker) checkBlobStore(deps.blobs, logger);

  const sweeper = startSweeper(
    {
      db: deps.db,
      files: filesEnv(config, deps.blobs),
      trashRetentionDays: config.trashRetentionDays,
      eventRetentionDays: config.eventRetentionDays,
    },
    logger,
    config.sweepIntervalSeconds * 1000,
  );
  const dispatcher = config.mail.dispatch
    ? startMailDispatcher({
        db: deps.db,
        blobs: deps.blobs,
        transport: await createMailTransport(config.mail, logger),
        logger,
        metrics: deps.metrics,
        mail: config.mail,
      })
    : null;
  const enrichment =
    config.enrichment.mode === 'off'
      ? null
      : startEnrichmentRunner({
          db: deps.db,
          logger,
          config: config.enrichment,
          execute: { providers: PROVIDERS, userAgent: userAgent(config.publicBaseUrl) },
        });
  const webhooks = config.webhooks.dispatch ? startWebhookDispatcher({ db: deps.db, logger, webhooks: config.webhooks }) : null;
  // Each job finishes the round under way and starts none after; all of them at once, so that no
  // job starts a round while another's is waited for. Once: a stop starts it at the signal, and
  // the close waits for it.
  let jobsStopped: Promise<unknown> | undefined;
  stopJobs = async () => {
    await (jobsStopped ??= Promise.all([enrichment?.stop(), webhooks?.stop(), dispatcher?.stop(), sweeper.stop()]));
  };

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, STOP_TIMEOUT_MS);
    force.unref();
    // The jobs stop at the signal, beside the requests in flight: a round started while those are
    // answered would wait for a database that does not answer past them, and past the stop limit
    // (docs/deploy.md §Start and stop). The close waits for the rounds under way.
    stopJobs().catch(() => {});
    app.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: a second signal (Ctrl-C reaches a wrapper and the server both) must not
  // end the process before the requests in flight are answered.
  started(stop);
  return app;
}
