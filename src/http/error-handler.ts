// Every failure leaves the server in one shape: {"error": {type, code, message, param?, requestId}}.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Deps, SERVICE_VERSION } from './context.ts';
import { appFaults, closeFaults, type Faults } from './fault-log.ts';
import { BlobDiskFaultError, BlobStoreMisconfiguredError, BlobStoreUnavailableError } from '../blobs/blob-store.ts';
import { isConnectionLoss, isDeadline, isStatementTimeout, isTransactionConflict, storageRefusal } from '../db/index.ts';
import { AppError, causeOf } from '../lib/errors.ts';
import { notJson } from './body.ts';
import { linger } from './linger.ts';
import { validationError } from './validation.ts';
import type { VersionHeaders } from './version.ts';

// Fastify's own errors that a client can cause, mapped to catalogue codes.
function fromFastify(err: FastifyError, request: FastifyRequest): AppError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return notJson();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is larger than 1 MiB.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON.');
  }
  if (err.validation) {
    const context = err.validationContext ?? 'body';
    // Validated as `null`, an absent body would be told it "must be of type object".
    if (context === 'body' && request.body === undefined) return noBody();
    return validationError(err.validation, context);
  }
  if (err instanceof SyntaxError || err.statusCode === 400) return new AppError('invalid_json', 'The request body is not valid JSON.');
  if (err.statusCode === 413) return new AppError('payload_too_large', 'The request body is too large.');
  if (err.statusCode === 415) return new AppError('unsupported_media_type', 'Unsupported Content-Type.', { param: 'Content-Type' });
  return null;
}

/** A request without a body to an operation whose body is required. */
function noBody(): AppError {
  return new AppError('invalid_type', 'The request has no body: this operation takes a JSON object, sent with Content-Type: application/json.');
}

/** No endpoint has this method and path (docs/errors.md, route_not_found). */
export function routeNotFound(request: FastifyRequest): AppError {
  return new AppError('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}.`);
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: AppError): FastifyReply {
  return reply
    .code(err.status)
    .headers(err.headers)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(err.body(request.id)));
}

/**
 * Errors the router raises before any hook runs (a path that is not valid percent-encoding, a
 * path parameter over the router's length cap): answered in the service's shape, with the
 * headers the pipeline would have set, the echo of the version header's other names among them
 * (docs/design.md §Requests: every response echoes the accepted names the request used).
 */
export function frameworkErrors(echo: VersionHeaders['echo']) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('X-Request-Id', request.id).header('Service-Version', SERVICE_VERSION);
    if (echo) echo(request, reply);
    const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter is too long.' : 'The request path is not valid percent-encoded UTF-8.';
    sendError(request, reply, new AppError('invalid_parameter', message, { param: 'path' }));
  };
}

/**
 * Failures of a dependency (the database, the blob store) that are not the request's fault, answered 503 with `Retry-After: 1`
 * (docs/errors.md, service_unavailable): the same request can succeed shortly.
 */
const UNAVAILABLE: { is: (err: unknown) => boolean; fault: keyof Faults; reason?: (err: unknown) => string; message: string }[] = [
  // The blob store refuses this deployment's settings (a bucket that does not exist, refused
  // credentials), or the machine refuses the local blob directory (its mode, a full or read-only
  // disk): no client can change that, and the log names the setting or the disk to mend. Before
  // the blob store's entry: they are two of its kinds.
  {
    is: (err) => err instanceof BlobStoreMisconfiguredError,
    fault: 'blobSettings',
    reason: (err) => (err as BlobStoreMisconfiguredError).reason,
    message: 'A dependency of the service is not reachable; retry shortly.',
  },
  {
    is: (err) => err instanceof BlobDiskFaultError,
    fault: 'blobDisk',
    reason: (err) => (err as BlobDiskFaultError).reason,
    message: 'A dependency of the service is not reachable; retry shortly.',
  },
  // The database went away under the request (reads were already tried again on a new
  // connection): the same request can succeed once it is back (docs/design.md §Database). Each
  // fault is logged as one for all the requests it fails, not once per request
  // (src/http/fault-log.ts).
  // The process stopped waiting for the database: the request's budget ran out, or a statement got
  // no answer past its deadline. Before the lost connection it also is: the database may be busy
  // and up, so it is not logged as an outage (docs/reliability.md §Operational faults in the log).
  { is: isDeadline, fault: 'databaseDeadline', message: 'The database did not answer in time; retry shortly.' },
  { is: isConnectionLoss, fault: 'database', message: 'A dependency of the service is not reachable; retry shortly.' },
  // The blob store (S3) could not be reached, did not answer in time, or answered a 5xx.
  { is: (err) => err instanceof BlobStoreUnavailableError, fault: 'blobStore', message: 'A dependency of the service is not reachable; retry shortly.' },
  // The database's storage refuses writes (a full disk, a read-only file or standby): retrying
  // helps once an operator mends it, who is told at error what to mend.
  {
    is: (err) => storageRefusal(err) !== undefined,
    fault: 'databaseStorage',
    reason: (err) => storageRefusal(err)!,
    message: 'A dependency of the service cannot store writes now; retry shortly.',
  },
  // A statement the database cancelled at DATABASE_STATEMENT_TIMEOUT_MS: it did not answer in time.
  { is: isStatementTimeout, fault: 'statementTimeout', message: 'The database did not answer in time; retry shortly.' },
  // A write that conflicted with other transactions each time it ran (src/db/write.ts `rerun`).
  { is: isTransactionConflict, fault: 'writeConflict', message: 'The write conflicted with others running at the same time; retry shortly.' },
];

/**
 * Logs `err` as the operational fault it is, one for all the requests it fails; false when it is
 * none. A fault with a `reason` is logged under its cause alone, which names what to mend.
 */
export function meetFault(err: unknown, request: FastifyRequest): boolean {
  const unavailable = UNAVAILABLE.find((u) => u.is(err));
  if (unavailable) meet(unavailable, err, request);
  return unavailable !== undefined;
}

function meet(unavailable: (typeof UNAVAILABLE)[number], err: unknown, request: FastifyRequest): void {
  const met = unavailable.reason ? { code: causeOf(err).code, message: unavailable.reason(err) } : err;
  request.server.faults[unavailable.fault].met(met, request.log);
}

/**
 * A failure of the service as the catalogue's error that answers it: its own, a dependency's 503,
 * else a 500. What is not the client's fault is logged, never sent: the answer names no database
 * code, address or stack.
 */
export function asAppError(error: unknown, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  const unavailable = UNAVAILABLE.find((u) => u.is(error));
  if (unavailable) {
    meet(unavailable, error, request);
    return new AppError('service_unavailable', unavailable.message, { headers: { 'Retry-After': '1' } });
  }
  request.log.error({ err: error }, 'unhandled error');
  return new AppError('internal_error', 'Something went wrong on our side; it has been logged.');
}

/**
 * Fastify asks for the connection to be closed after every refusal of a body by a content-type
 * parser (a 413, a 415, an `invalid_json`), since the client may still be sending. Closed at once,
 * the socket is reset under a client still sending, and the reset can destroy the answer before
 * the client reads it (curl, Python's http.client: a reset or a broken pipe, not the 413). A body
 * read in full needs no close at all, and closing drops the requests pipelined after it. So the
 * connection is kept: the rest of a body not read in full is read and dropped, within the bounds
 * of linger(), and one read in full leaves the connection ready for the next request.
 */
export function keepConnection(request: FastifyRequest, reply: FastifyReply): void {
  if (reply.getHeader('connection') !== 'close') return;
  reply.removeHeader('connection');
  if (!request.raw.complete) linger(request.raw, request.raw.socket);
}

export function installErrorHandling(app: FastifyInstance, deps: Deps): void {
  const faults = appFaults(deps, deps.logger);
  app.decorate('faults', faults);
  app.addHook('onClose', (_app, done) => {
    closeFaults(faults);
    done();
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    keepConnection(request, reply);
    const known = error instanceof AppError ? error : fromFastify(error, request);
    return sendError(request, reply, known ?? asAppError(error, request));
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, routeNotFound(request)));
}
