// A PostgreSQL that refuses connections (stopped, restarting, a wrong address) is told at once
// (docs/reliability.md §Lost connections). postgres.js queues the statements of a lane while it
// connects, and after a refused attempt tries again with the next statement in line only, after a
// short back-off: a burst of requests then waited in line for one refused attempt each, most of them
// until their deadline. So when a lane's connection is refused, the lane is replaced as one that
// missed a deadline is (everything waiting on it fails at once, as 503), and for a moment the
// statements that come next fail at once too, without waiting in line for another refused
// attempt; the first one after that moment tries to connect again.
import { isConnectionLoss } from '../connection-loss.ts';

// Errors that say no connection could be made: nothing listens, no route, no such host, the
// server is starting or shutting down (SQLSTATE 57P03, cannot connect now), or the peer is no
// PostgreSQL (NOT_POSTGRES: a proxy that closes each connection unanswered, src/db/postgres/peer.ts).
const REFUSED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03', 'NOT_POSTGRES']);

/** How long statements fail at once after a refused connection. */
export const REFUSED_MS = 500;

/** A statement not sent: the database refused a connection just now. */
export class RefusedError extends Error {
  override name = 'RefusedError';
  readonly code = 'DATABASE_REFUSED';
  constructor() {
    super('the database refused a connection just now');
  }
}

export function isRefusal(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && REFUSED.has(code) && isConnectionLoss(err);
}

/** When the lanes of one process last had a connection refused. */
export class Refusals {
  #until = 0;

  /** The error to fail with at once while a connection was refused within REFUSED_MS; otherwise undefined. */
  now(): RefusedError | undefined {
    return performance.now() < this.#until ? new RefusedError() : undefined;
  }

  /** True, and fails what comes next for a moment, when `err` says a connection was refused. */
  saw(err: unknown): boolean {
    if (!isRefusal(err)) return false;
    this.#until = performance.now() + REFUSED_MS;
    return true;
  }
}
