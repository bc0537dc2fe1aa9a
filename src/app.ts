// buildApp(config, deps) assembles the service and returns it; only the entry point listens.
import type { Server } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Config } from './config.ts';
import { authRoutes } from './auth/routes.ts';
import { emailRoutes } from './emails/routes.ts';
import { enrichmentRoutes } from './enrichment/routes.ts';
import { fileRoutes } from './files/routes.ts';
import { JSON_BODY_LIMIT, installJsonParser } from './http/body.ts';
import type { Deps, PluginOptions } from './http/context.ts';
import { frameworkErrors, installErrorHandling } from './http/error-handler.ts';
import { clientError, noTunnel, unmetExpectation } from './http/client-error.ts';
import { healthRoutes } from './http/health.ts';
import { installIdempotency } from './http/idempotency.ts';
import { installMetrics } from './http/metrics.ts';
import { outboxDepthGauge } from './jobs/mail-dispatcher.ts';
import { webhookDepthGauge } from './jobs/webhook-dispatcher.ts';
import { createMetrics } from './metrics/registry.ts';
import { installOpenApi } from './http/openapi.ts';
import { installPipeline } from './http/pipeline.ts';
import { requestIdFor } from './http/request-id.ts';
import { versionHeaders } from './http/version.ts';
import { installValidators, validatorFactory } from './http/validation.ts';
import { lazySchemas, type LazySchemas } from './http/lazy-schemas.ts';
import { createHttpLinks } from './lib/links.ts';
import { listRoutes } from './lists/routes.ts';
import { meetingIdsFor } from './meetings/derived.ts';
import { meetingRoutes } from './meetings/routes.ts';
import { memberRoutes } from './members/routes.ts';
import { messageRoutes } from './messages/routes.ts';
import { channelRoutes } from './channels/routes.ts';
import { objectRoutes } from './objects/routes.ts';
import { registerDerived } from './records/service.ts';
import { recordRoutes } from './records/routes.ts';
import { trashRoutes } from './trash/routes.ts';
import { mergeRoutes } from './merges/routes.ts';

const schemasOf = new WeakMap<FastifyInstance, LazySchemas>();

/**
 * At most `max` open client connections (0: no cap): Node closes one more as soon as it is
 * accepted, without reading it, so that sockets held open by slow or idle clients cannot take all
 * of the process's memory and file descriptors (docs/deploy.md §Client connections). In a
 * cluster worker it is closed too: by default Node hands it back to the primary, which offers it
 * to the next worker, round and round while every worker is full, the primary busy and the
 * client unanswered.
 */
function capConnections(server: Server, max: number): void {
  if (max === 0) return;
  server.maxConnections = max;
  (server as Server & { dropMaxConnection?: boolean }).dropMaxConnection = true;
}

/** Compiles every route schema not compiled yet, as the first requests would (tests); how many it compiled. */
export function compileRouteSchemas(app: FastifyInstance): number {
  return schemasOf.get(app)?.compileAll() ?? 0;
}

export async function buildApp(config: Config, deps: Deps): Promise<FastifyInstance> {
  const schemas = lazySchemas();
  // One reading of VERSION_HEADERS, for the pipeline and for the router's own refusals alike.
  const version = versionHeaders(config.versionHeaders);
  // Typed as Fastify's logger, so that the app is a plain FastifyInstance rather than one typed by pino.
  const loggerInstance: FastifyBaseLogger = deps.logger;
  const app: FastifyInstance = Fastify({
    loggerInstance,
    // Fastify's own request lines are off: the pipeline writes one line per request instead.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: requestIdFor,
    bodyLimit: JSON_BODY_LIMIT,
    // Large uploads may take minutes, so there is no cap on a whole request; a connection that
    // sends nothing for a minute is closed instead, and headers must arrive within 30 s.
    requestTimeout: 0,
    connectionTimeout: 60_000,
    // Idle kept-alive connections close after KEEP_ALIVE_TIMEOUT_MS (docs/deploy.md §Client connections).
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // A request without Host is refused by the pipeline in the error shape, not by Node's bare 400.
    http: { headersTimeout: 30_000, requireHostHeader: false },
    // Requests that arrive while the server closes are answered by the pipeline, in the one error
    // shape (src/http/pipeline.ts), not by Fastify's own 503 body.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Path parameters are length-checked by the route schemas (ids up to 255); the router's own
    // cap of 100 would answer longer ones with a bare 414 first.
    routerOptions: { maxParamLength: 2048 },
    frameworkErrors: frameworkErrors(version.echo),
    clientErrorHandler: clientError,
    // Each request validator is compiled by the first request it checks, each response serializer
    // by the first response it writes (src/http/lazy-schemas.ts); Fastify's own compilers (and
    // Ajv with them) are never loaded.
    schemaController: { compilersFactory: { buildValidator: validatorFactory(schemas), buildSerializer: schemas.buildSerializer } },
  });
  schemasOf.set(app, schemas);
  capConnections(app.server, config.maxConnections);
  app.server.on('checkExpectation', unmetExpectation);
  app.server.on('connect', noTunnel);
  app.decorateRequest('principal', null as never);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('endBudget', null as never);

  installValidators(app);
  installJsonParser(app);
  installErrorHandling(app, deps);
  installPipeline(app, deps, version);
  installIdempotency(app, deps);
  // Made here when the caller has none; deps itself is never changed.
  const metrics = deps.metrics ?? createMetrics();
  installMetrics(app, deps, metrics);
  outboxDepthGauge(metrics, deps.db);
  webhookDepthGauge(metrics, deps.db);
  await installOpenApi(app);

  const opts: PluginOptions = { config, deps, links: createHttpLinks(config.publicAppUrl), metrics };
  await app.register(
    healthRoutes(deps, { 'the blob store': () => deps.blobs.ping() }, { readinessTimeoutMs: config.readinessTimeoutMs, stallMs: config.livenessStallMs }),
  );
  await app.register(authRoutes);
  await app.register(listRoutes, opts);
  await app.register(messageRoutes, opts);
  await app.register(fileRoutes, opts);
  await app.register(memberRoutes, opts);
  // The records engine reads `$meeting` through the meetings module (docs/records.md §Definitions).
  for (const type of ['account', 'contact', 'opportunity']) registerDerived(type, '$meeting', meetingIdsFor);
  await app.register(recordRoutes, opts);
  await app.register(objectRoutes, opts);
  await app.register(meetingRoutes, opts);
  await app.register(emailRoutes, opts);
  await app.register(channelRoutes, opts);
  await app.register(trashRoutes, opts);
  await app.register(mergeRoutes, opts);
  await app.register(enrichmentRoutes, opts);
  // Loaded only when served, so that MCP=off costs nothing (docs/mcp.md).
  if (config.mcp) await app.register((await import('./mcp/routes.ts')).mcpRoutes, { deps, origins: config.mcpOrigins });
  return app;
}
