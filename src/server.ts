// The entry point: read the configuration, open the dependencies, listen, and shut down
// gracefully on SIGTERM/SIGINT (stop accepting, let requests in flight finish, close the pools).
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createLogger } from './logger.ts';
import { closeDeps, openDeps } from './runtime.ts';
import { filesEnv } from './files/service.ts';
import { startSweeper } from './jobs/sweeper.ts';
import { startMailDispatcher } from './jobs/mail-dispatcher.ts';
import { createMailTransport } from './mail/index.ts';
import { startEnrichmentRunner } from './jobs/enrichment.ts';
import { PROVIDERS, userAgent } from './enrichment/providers.ts';

/** `worker`: one of the processes of `serve --workers N` (see src/cluster.ts). */
export async function startServer(config: Config, opts: { worker?: boolean } = {}): Promise<FastifyInstance> {
  const logger = createLogger(config.logLevel);
  const deps = await openDeps(config, logger, opts);
  const app = await buildApp(config, deps);
  const sweeper = startSweeper({ db: deps.db, files: filesEnv(config, deps.blobs) }, logger, config.sweepIntervalSeconds * 1000);
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
  app.addHook('onClose', async () => {
    await enrichment?.stop();
    await dispatcher?.stop();
    await sweeper.stop();
    await closeDeps(deps);
  });
  await app.listen({ port: config.port, host: config.host });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return app;
}
