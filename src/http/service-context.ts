// How a route calls its service, the one way every module does (docs/architecture.md §The service
// convention): reads `service.fn(ctx(request), input)`, writes
// `write(request, reply, (ctx) => service.fn(ctx, input))`. The ctx is transport-free: the
// request's principal as the actor, its one clock (request.startedAt), the app's links, and
// whatever the module bound once at registration (`extra`, e.g. the files module's blob store).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Executor, Tx } from '../db/index.ts';
import type { Ctx } from '../lib/context.ts';
import type { PluginOptions } from './context.ts';
import { inTransaction } from './idempotency.ts';

export interface ServiceContext<C extends Ctx> {
  /** The ctx of a read: ctx.db is the database. */
  ctx: (request: FastifyRequest) => C;
  /**
   * Runs a write in one transaction, ctx.db being that transaction (a `WriteCtx`); with an
   * Idempotency-Key the serialized response commits in the same transaction (docs/design.md §Idempotency).
   */
  write: <T>(request: FastifyRequest, reply: FastifyReply, fn: (ctx: C & { db: Tx }) => Promise<T>) => Promise<T>;
}

export function serviceContext(opts: Pick<PluginOptions, 'deps' | 'links'>): ServiceContext<Ctx>;
export function serviceContext<E extends object>(opts: Pick<PluginOptions, 'deps' | 'links'>, extra: E): ServiceContext<Ctx & E>;
export function serviceContext(opts: Pick<PluginOptions, 'deps' | 'links'>, extra?: object): ServiceContext<Ctx> {
  const { deps, links } = opts;
  const make = extra
    ? <D extends Executor>(request: FastifyRequest, db: D): Ctx<D> => ({ db, actor: request.principal, now: request.startedAt, links, ...extra })
    : <D extends Executor>(request: FastifyRequest, db: D): Ctx<D> => ({ db, actor: request.principal, now: request.startedAt, links });
  const db = deps.db.kysely;
  return {
    ctx: (request) => make(request, db),
    write: (request, reply, fn) => inTransaction(deps, request, reply, (tx) => fn(make(request, tx))),
  };
}
