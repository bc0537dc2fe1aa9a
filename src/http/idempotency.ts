// Idempotency-Key on state-changing POSTs (docs/design.md §Idempotency). A key names one request
// per workspace and operation. The claim is taken after every other check (auth, version, rate
// limit, scope, validation); only a success is stored, so a request refused or failed anywhere
// gives its key back and runs again when retried.
import { hash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Tx, write } from '../db/index.ts';
import type { Deps } from './context.ts';
import { AppError, causeOf } from '../lib/errors.ts';
import { MAX_BODY_DEPTH, tooDeep } from './body.ts';
import { severalLines } from './field-lines.ts';
import { claimKey, finishKey, type KeyRef, releaseKey } from '../idempotency/repository.ts';
import type { Principal } from '../auth/scopes.ts';

interface IdempotencyState {
  ref: KeyRef;
  lockedAt: string;
  /** The success is stored (by write(), in its transaction): nothing left for settle to do. */
  finished: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyState | null;
  }
}

const PRINTABLE = /^[\x20-\x7e]+$/;

/**
 * JSON with object keys sorted, so that equal bodies have equal fingerprints. Bounded like the
 * body parser (MAX_BODY_DEPTH): a value nested deeper is refused with the same 400, never left to
 * overflow the stack.
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value !== null && typeof value === 'object' && depth >= MAX_BODY_DEPTH) throw tooDeep();
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], depth + 1)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The key as HTTP reads a field value: the spaces and tabs around it are no part of it. A socket's
 * request arrives without them; a request handed in over another way (MCP's write_to_rolodex,
 * docs/mcp.md §Tools) is read alike, so that one key names one request whichever way it came.
 */
function readKey(request: FastifyRequest): string | null {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return null;
  const param = { param: 'Idempotency-Key' };
  // Node joins two lines as `a, b`, one key made of both, where a proxy may have read either.
  if (severalLines(request.raw.rawHeaders, 'idempotency-key'))
    throw new AppError('invalid_idempotency_key', 'The request has more than one Idempotency-Key header; send one.', param);
  const raw = typeof header === 'string' ? header.replace(/^[ \t]+|[ \t]+$/g, '') : header;
  if (typeof raw !== 'string' || raw.length === 0)
    throw new AppError('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', param);
  if (raw.length > 255) throw new AppError('idempotency_key_too_long', 'Idempotency-Key must be at most 255 characters.', param);
  if (!PRINTABLE.test(raw)) throw new AppError('invalid_idempotency_key', 'Idempotency-Key must contain only printable ASCII characters.', param);
  return raw;
}

/**
 * The path of a request as its route reads it: the route's pattern with each parameter, decoded
 * by the router, written back in one spelling (that of a URL's path: sub-delimiters, `:` and `@`
 * as they are, anything else outside the unreserved characters percent-encoded in upper case),
 * then the query as sent, unless it holds no parameter. `/v1/%61ccounts` and `/v1/accounts`, an
 * id spelled with `%6C` for `l`, or `/v1/lists?` and `/v1/lists`, reach one route with the same
 * parameters, so they are one path (docs/design.md §Idempotency); a path spelled as clients write
 * it is its own routed path.
 */
export function routedPath(request: FastifyRequest): string {
  // Coerced by the route's schema, a parameter may be a number or a boolean; its text is the same.
  const params = (request.params ?? {}) as Record<string, string | number | boolean | undefined>;
  const path = request.routeOptions.url!.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => pathSegment(String(params[name] ?? '')));
  const q = request.url.indexOf('?');
  // A query of no parameter (`?`, `?&`) is no query: the route reads the same parameters.
  return q === -1 || /^\?&*$/.test(request.url.slice(q)) ? path : path + request.url.slice(q);
}

const PATH_SAFE = /%(?:3A|40|24|26|2B|2C|3B|3D)/g;

function pathSegment(value: string): string {
  return encodeURIComponent(value).replace(PATH_SAFE, decodeURIComponent);
}

/**
 * What makes two requests under one key the same request: method, routed path, caller and
 * canonical body.
 * The caller is part of it because what an answer holds depends on who asked (a user's visibility
 * and role), so a replay goes only to the caller that was answered (docs/design.md §Idempotency).
 * Workspace keys see alike, and scopes are checked before this.
 */
export function fingerprintOf(method: string, path: string, p: Pick<Principal, 'subjectType' | 'userId'>, body: unknown): string {
  const caller = p.subjectType === 'user' ? `user ${p.userId}` : 'workspace';
  return hash('sha256', `${method} ${path}\n${caller}\n${canonicalJson(body)}`, 'hex');
}

/**
 * The fingerprint that releases before the caller was part of it stored: method, path and
 * canonical body (the routed path: those releases stored the path as sent, which it is for a
 * path spelled as clients write it). A key stored in this form names no caller, so its answer is
 * replayed to nobody: the request is refused with 422 until the key expires (docs/design.md
 * §Idempotency).
 */
export function callerlessFingerprintOf(method: string, path: string, body: unknown): string {
  return hash('sha256', `${method} ${path}\n${canonicalJson(body)}`, 'hex');
}

export function installIdempotency(app: FastifyInstance, deps: Deps): void {
  app.decorateRequest('idempotency', null);

  // Attached only to the routes that declare `idempotent`, so that reads pay nothing for it.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.preHandler = [...hooks(route.preHandler), claim];
    route.onSend = [...hooks(route.onSend), settle];
  });

  async function claim(request: FastifyRequest, reply: FastifyReply) {
    const key = readKey(request);
    if (key === null) return;
    const body = request.body ?? null;
    const path = routedPath(request);
    const fingerprints = {
      own: fingerprintOf(request.method, path, request.principal, body),
      callerless: callerlessFingerprintOf(request.method, path, body),
    };
    // The route declares its operation (checkRouteContract makes sure of it).
    const ref: KeyRef = { workspaceId: request.principal.workspaceId, operation: request.routeOptions.config.operation as string, key };
    const claim = await claimKey(deps.db.kysely, ref, fingerprints, request.startedAt);
    switch (claim.kind) {
      case 'claimed':
        request.idempotency = { ref, lockedAt: claim.lockedAt, finished: false };
        return;
      case 'replay':
        return reply.code(claim.status).header('Idempotent-Replayed', 'true').type('application/json; charset=utf-8').send(claim.body);
      case 'in_flight':
        throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
          param: 'Idempotency-Key',
          headers: { 'Retry-After': '1' },
        });
      case 'mismatch':
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request; use a new key.', { param: 'Idempotency-Key' });
      case 'callerless':
        throw new AppError(
          'idempotency_key_reused',
          'This Idempotency-Key was stored by an earlier release that did not record its caller, so its answer is not replayed; use a new key.',
          { param: 'Idempotency-Key' },
        );
      case 'erased':
        throw new AppError(
          'idempotency_key_reused',
          'The answer stored under this Idempotency-Key named a record that has since been purged, so it is not replayed and the request is not run again; use a new key.',
          { param: 'Idempotency-Key' },
        );
    }
  }

  // Settles what write() did not: a success answered without it is stored; any failure (a 4xx of
  // the handler, a 5xx, a write whose transaction did not commit) gives the key back.
  async function settle(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const idem = request.idempotency;
    if (!idem || idem.finished) return payload;
    idem.finished = true;
    const status = reply.statusCode;
    // The answer is decided: a failure to record it (the database went away meanwhile) is logged
    // and never replaces it, since an error thrown here would leave the service's error shape. A
    // claim left behind is taken over once its lease runs out.
    try {
      if (status >= 200 && status < 300 && typeof payload === 'string') {
        await finishKey(deps.db.kysely, idem.ref, idem.lockedAt, status, payload);
      } else {
        await releaseKey(deps.db.kysely, idem.ref, idem.lockedAt);
      }
    } catch (err) {
      request.log.warn({ err }, 'the Idempotency-Key could not be settled');
    }
    return payload;
  }
}

function hooks<T>(h: T | T[] | undefined): T[] {
  return h === undefined ? [] : Array.isArray(h) ? h : [h];
}

/**
 * Runs a handler's writes in one transaction. With an Idempotency-Key, the serialized response is
 * stored in that same transaction, so a crash leaves either both or neither. Routes call it through
 * serviceContext's write() (service-context.ts), which hands the service a ctx on the transaction.
 */
export async function inTransaction<T>(deps: Deps, request: FastifyRequest, reply: FastifyReply, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const idem = request.idempotency;
  let stored = false;
  // Follow-ups (a ranked leaf to split: docs/pages.md §Keeping it exact) run after COMMIT.
  const followUpFailed = (err: unknown) => request.log.error({ err }, 'a follow-up of a committed write failed');
  const result = await write(
    deps.db.kysely,
    async (tx) => {
      const value = await fn(tx);
      if (idem && !idem.finished) {
        const body = reply.serialize(value) as string;
        if (!(await finishKey(tx, idem.ref, idem.lockedAt, 200, body))) {
          throw new AppError('idempotency_conflict', 'Another request with this Idempotency-Key took over; retry shortly.', {
            param: 'Idempotency-Key',
            headers: { 'Retry-After': '1' },
          });
        }
        stored = true;
      }
      return value;
    },
    // A service changes nothing outside its transaction (docs/architecture.md §The service
    // convention), so a transaction cancelled by a deadlock runs again. No bug: one line of the
    // request, without a stack (docs/reliability.md §Operational faults in the log).
    { followUpFailed, rerun: (err) => request.log.info(causeOf(err), 'the transaction was cancelled by a conflict with another; running it again') },
  );
  // Only once committed: a transaction that failed to commit leaves the claim to settle, which
  // gives it back instead of leaving it pending until its lease runs out.
  if (idem && stored) idem.finished = true;
  return result;
}
