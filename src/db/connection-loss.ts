// Errors that say the connection to PostgreSQL was lost or could not be made, not that a statement
// failed: the server restarted or failed over, something on the way closed an idle connection, or
// the database is down (docs/design.md §Database, "A lost connection").
const SOCKET = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// A peer that answered as no PostgreSQL does, or closed the connection unanswered
// (src/db/postgres/peer.ts): a proxy that has lost the database, such as a load balancer with no
// backend up, closes every connection so.
const PEER = 'NOT_POSTGRES';
// postgres.js's own codes for a connection that closed.
const DRIVER = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED']);
// SQLSTATE: the server shutting down (admin or crash) or not yet accepting connections.
const SHUTDOWN = new Set(['57P01', '57P02', '57P03']);
// A connection that could not be made in time, or a statement the server did not answer in time
// (src/db/postgres/deadline.ts): lost too, but only after a wait.
const TIMEOUT = new Set(['ETIMEDOUT', 'CONNECT_TIMEOUT', 'DATABASE_DEADLINE']);
// A statement not sent because the database refused a connection just now (src/db/postgres/refused.ts):
// not worth sending again at once.
const REFUSED = 'DATABASE_REFUSED';

function codeOf(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** The connection was lost at once: a read is worth sending again on a new one. */
export function isAbruptConnectionLoss(err: unknown): boolean {
  const code = codeOf(err);
  if (code === undefined) return false;
  // SQLSTATE class 08: connection exceptions.
  return SOCKET.has(code) || code === PEER || DRIVER.has(code) || SHUTDOWN.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

/** The connection was lost or could not be made: the database is not reachable now. */
export function isConnectionLoss(err: unknown): boolean {
  const code = codeOf(err) ?? '';
  return isAbruptConnectionLoss(err) || TIMEOUT.has(code) || code === REFUSED;
}

/**
 * The process stopped waiting for the database's answer (code DATABASE_DEADLINE): the request's
 * time budget ran out (src/db/request-budget.ts), or a statement got no answer past its deadline
 * (src/db/postgres/deadline.ts). A lost connection too, but one that says only that the database
 * did not answer in time: it may be slow, or busy with other work, and still up.
 */
export function isDeadline(err: unknown): boolean {
  return codeOf(err) === 'DATABASE_DEADLINE';
}

/**
 * PostgreSQL cancelled a statement that ran past `statement_timeout` (SQLSTATE 57014): the
 * database did not answer in time. The process cancels none of its statements once sent
 * (src/db/postgres/deadline.ts), so a cancellation that reaches a caller is the server's timeout.
 */
export function isStatementTimeout(err: unknown): boolean {
  return codeOf(err) === '57014';
}

/**
 * PostgreSQL cancelled a transaction to end a deadlock (SQLSTATE 40P01), or for a serialization
 * failure (40001): the conflict lies between transactions, not in the work, and the transaction
 * rolled back, so the same work run again can succeed.
 */
export function isTransactionConflict(err: unknown): boolean {
  const code = codeOf(err);
  return code === '40P01' || code === '40001';
}

/** PostgreSQL cancelled a transaction, or the statement of a savepoint, to end a deadlock (SQLSTATE 40P01). */
export function isDeadlock(err: unknown): boolean {
  return codeOf(err) === '40P01';
}
