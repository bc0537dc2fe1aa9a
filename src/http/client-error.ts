// Requests Node's HTTP parser refuses before Fastify sees them (docs/errors.md §Before routing):
// headers and URL over the size limit (431), a Content-Length together with Transfer-Encoding,
// a byte not allowed in a header, a malformed request line (400). They are answered in the
// service's error shape, with a request id, whenever the connection can still take an answer;
// the connection is closed after it, since the parser cannot tell where the next request starts.
// So are the requests Node parsed but would refuse itself, bare: one whose `Expect` header it
// does not know (417; its connection stays open), and a CONNECT (404; closed, as Node closes it).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { SERVICE_VERSION } from './context.ts';
import { AppError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { requestIdFor } from './request-id.ts';

const REASONS: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 431: 'Request Header Fields Too Large' };

/** The refusal of a request line and headers over Node's limit (`http.maxHeaderSize`, 16 KiB). */
export const headersTooLarge = () => new AppError('headers_too_large', 'The request line and headers are larger than the server accepts (16 KiB).');

function errorFor(code: string | undefined): AppError {
  if (code === 'HPE_HEADER_OVERFLOW') return headersTooLarge();
  return new AppError('malformed_request', 'The request is not well-formed HTTP/1.1 (its framing or a header is invalid).');
}

export function clientError(err: Error & { code?: string }, socket: Socket): void {
  // Nothing to answer: the client went away, or the request timed out before it was complete.
  if (err.code === 'ECONNRESET' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable) {
    socket.destroy();
    return;
  }
  answerAndClose(socket, errorFor(err.code), newId('req'));
}

/** Writes `error` in the error shape straight to the socket, then closes it: no parser is left to answer. */
function answerAndClose(socket: Socket, error: AppError, requestId: string): void {
  const body = JSON.stringify(error.body(requestId));
  socket.end(
    [
      `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Bad Request'}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      `Service-Version: ${SERVICE_VERSION}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}

/**
 * A CONNECT request (a tunnel through a proxy, which this server is not). Node would close its
 * connection without a word; it is answered 404 `route_not_found` in the one error shape, as any
 * other method no route has, and the connection is then closed: what follows the request on it
 * would be the tunnel's bytes, not HTTP.
 */
export function noTunnel(req: IncomingMessage, socket: Socket): void {
  answerAndClose(socket, new AppError('route_not_found', `No route CONNECT ${req.url ?? ''}.`), requestIdFor(req));
}

/**
 * A request whose `Expect` asks for something other than `100-continue` (which Node answers
 * itself). Node would answer it 417 with an empty body and no request id before routing; it is
 * answered 417 `expectation_failed` in the one error shape instead, with `param` `Expect`, and is
 * not served (docs/errors.md §Before routing).
 */
export function unmetExpectation(req: IncomingMessage, res: ServerResponse): void {
  const requestId = requestIdFor(req);
  const error = new AppError('expectation_failed', 'The Expect header asks for something the server does not do; only "100-continue" is understood.', {
    param: 'Expect',
  });
  const body = JSON.stringify(error.body(requestId));
  res.writeHead(error.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Request-Id': requestId,
    'Service-Version': SERVICE_VERSION,
  });
  res.end(body);
}
