// The checks every /v1 request passes, in the order of the product decisions: authenticate (401)
// → version header (400) → rate limit (429) → scope (403). Body parsing and schema validation
// follow in Fastify's own stages, so a request refused here is never parsed and changes nothing.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { startRequestBudget } from '../db/index.ts';
import { AppError } from '../lib/errors.ts';
import type { AuthResult } from '../auth/authenticator.ts';
import type { RateCategory, RateDecision } from '../rate-limit/bucket.ts';
import { type Deps, SERVICE_VERSION } from './context.ts';
import { routeNotFound } from './error-handler.ts';
import { challenge, readCredential } from './bearer.ts';
import type { VersionHeaders } from './version.ts';

const AUTH_MESSAGES = {
  invalid: 'The API key is not valid.',
  revoked: 'The API key has been revoked.',
  expired: 'The API key has expired.',
} as const;

// Every refusal of the key carries the challenge of RFC 6750 §3 that fits it (./bearer.ts).
const NO_CREDENTIALS = challenge();

// Each step returns a promise only when it has to wait (a key not cached, a shared rate limit), so
// that the common request passes the whole pipeline without a tick of the event loop.
export function authenticate(deps: Deps, request: FastifyRequest): void | Promise<void> {
  const credential = readCredential(request.headers.authorization, request.raw.rawHeaders);
  if (credential.kind === 'none') {
    throw new AppError('missing_api_key', 'Send your API key as "Authorization: Bearer <API_KEY>".', { param: 'Authorization', headers: NO_CREDENTIALS });
  }
  if (credential.kind !== 'token') {
    const message =
      credential.kind === 'several'
        ? 'The request has more than one Authorization header; send one, "Bearer <API_KEY>".'
        : 'The Authorization header is not "Bearer <API_KEY>": the key is missing or is not one token.';
    throw new AppError('invalid_api_key', message, { param: 'Authorization', headers: challenge('invalid_request', message) });
  }
  const result = deps.auth.authenticate(credential.token, request.startedAt);
  if (result instanceof Promise) return result.then((r) => admit(request, r));
  admit(request, result);
}

function admit(request: FastifyRequest, result: AuthResult): void {
  if (!result.ok) {
    const message = AUTH_MESSAGES[result.reason];
    throw new AppError('invalid_api_key', message, { param: 'Authorization', headers: challenge('invalid_token', message) });
  }
  request.principal = result.principal;
}

function rateLimit(deps: Deps, request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  const category = request.routeOptions.config.category;
  if (!deps.rateLimiter || !category) return;
  const d = deps.rateLimiter.consume(request.principal.workspaceId, category);
  if (d instanceof Promise) return d.then((decision) => applyDecision(reply, category, decision));
  applyDecision(reply, category, d);
}

/** The refusal of a request that found its bucket empty (docs/errors.md, rate_limited). */
export function rateLimited(category: RateCategory, d: RateDecision): AppError {
  return new AppError('rate_limited', `Too many ${category} requests for this workspace; retry after ${d.retryAfter} s.`, {
    headers: { 'Retry-After': String(d.retryAfter) },
  });
}

function applyDecision(reply: FastifyReply, category: RateCategory, d: RateDecision | null): void {
  if (!d) return;
  reply.header('X-RateLimit-Limit', d.limit).header('X-RateLimit-Remaining', d.remaining).header('X-RateLimit-Reset', d.reset);
  if (!d.allowed) throw rateLimited(category, d);
}

function checkScopes(request: FastifyRequest): void {
  const needed = request.routeOptions.config.scopes ?? [];
  const granted = request.principal.scopes;
  if (granted === null) return;
  const missing = needed.filter((s) => !granted.includes(s));
  if (missing.length > 0) {
    const message = `This API key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' and ')} needed here (requires ${needed.join(' and ')}).`;
    throw new AppError('insufficient_scope', message, { headers: challenge('insufficient_scope', message, needed) });
  }
  const any = request.routeOptions.config.anyScopes ?? [];
  if (any.length > 0 && !any.some((s) => granted.includes(s))) {
    const message = `This API key lacks the scopes ${any.join(' and ')}; this operation needs one of them.`;
    throw new AppError('insufficient_scope', message, { headers: challenge('insufficient_scope', message, any) });
  }
}

function check(deps: Deps, version: VersionHeaders, request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  const authenticated = authenticate(deps, request);
  if (authenticated) return authenticated.then(() => afterAuthentication(deps, version, request, reply));
  return afterAuthentication(deps, version, request, reply);
}

function afterAuthentication(deps: Deps, version: VersionHeaders, request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  version.check(request);
  const limited = rateLimit(deps, request, reply);
  if (limited) return limited.then(() => checkScopes(request));
  checkScopes(request);
}

/**
 * Every /v1 route declares what the pipeline enforces (operation, scopes, rate category): a route
 * that forgot them would skip authentication, so registering one fails start-up instead.
 */
export function checkRouteContract(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): void {
  if (route.url !== '/v1' && !route.url.startsWith('/v1/')) return;
  const c = route.config ?? {};
  const missing = [!c.operation && 'operation', !Array.isArray(c.scopes) && 'scopes', !c.category && 'category'].filter(Boolean);
  if (missing.length === 0) return;
  const method = Array.isArray(route.method) ? route.method.join(',') : route.method;
  throw new Error(
    `route ${method} ${route.url} does not declare ${missing.join(', ')} in its config: every /v1 route declares operation, scopes and category (docs/architecture.md §Request pipeline)`,
  );
}

/**
 * A request that reaches the server once it has begun to close (the next request on a keep-alive
 * connection, a pipelined one) is not started: it is answered 503 `service_unavailable` in the one
 * error shape, with its request id and `Retry-After: 1`, and the connection is closed, so that the
 * client sends it again to another instance (docs/errors.md §Requests in general).
 */
function shuttingDown(): AppError {
  return new AppError('service_unavailable', 'The server is shutting down; retry shortly.', { headers: { 'Retry-After': '1', Connection: 'close' } });
}

/**
 * An HTTP/1.1 request without a Host header is malformed (RFC 9112 §3.2). Node's own refusal of it
 * is a bare 400 with no body, so the server turns that refusal off (src/app.ts) and answers it
 * here, in the one error shape, and closes the connection as for any request refused before
 * routing (docs/errors.md §Before routing).
 */
function noHost(): AppError {
  return new AppError('malformed_request', 'An HTTP/1.1 request must carry a Host header.', { param: 'Host', headers: { Connection: 'close' } });
}

export function installPipeline(app: FastifyInstance, deps: Deps, version: VersionHeaders): void {
  app.addHook('onRoute', checkRouteContract);
  const echo = version.echo;
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = Date.now();
    reply.header('X-Request-Id', request.id).header('Service-Version', SERVICE_VERSION);
    if (echo) echo(request, reply);
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') return done(noHost());
    if (closing) return done(shuttingDown());
    // No endpoint has this method and path: answered before its body is read, so that what the
    // body holds (malformed or deep JSON, a charset, its size) never changes that answer, and no
    // caller gets a body parsed without naming an endpoint first.
    if (request.is404) return done(routeNotFound(request));
    // Only routes that declare an operation are API routes; health, docs and byte endpoints are not.
    // All of an API request's waits on the database share one deadline (docs/reliability.md §Lost
    // connections); byte endpoints stream bodies of any length and wait per statement only.
    const api = Boolean(request.routeOptions.config.operation);
    request.endBudget = startRequestBudget(api ? deps.db.requestBudgetMs : 0);
    if (!api) return done();
    let waiting: void | Promise<void>;
    try {
      waiting = check(deps, version, request, reply);
    } catch (err) {
      return done(err as Error);
    }
    if (waiting) waiting.then(() => done(), done);
    else done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    request.endBudget?.();
    // One line per request. The route pattern, never the raw URL: byte endpoints carry capability
    // tokens in their paths, and nothing secret may reach a log line.
    if (!deps.logger.isLevelEnabled('info')) return done();
    request.log.info(
      {
        op: request.routeOptions.config.operation ?? request.routeOptions.url ?? 'not_found',
        method: request.method,
        route: request.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ws: request.principal?.workspaceId,
      },
      'request',
    );
    done();
  });
}
