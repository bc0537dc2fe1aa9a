// The first argument of every service function: fn(ctx, input). Transport-free: a route, a CLI
// command, the import, a test or a background job builds it, and the service neither knows nor
// cares which (docs/architecture.md §The service convention).
import type { Executor, Tx } from '../db/index.ts';
import { createHttpLinks, type HttpLinks } from './links.ts';

/** Who acts: an API key's principal, or an operator acting on one workspace. */
export interface Actor {
  workspaceId: string;
  subjectType: 'user' | 'workspace';
  /** Set when a user acts (a user's key); null for the workspace itself. */
  userId: string | null;
  /** The user's role; null for the workspace itself. */
  role: 'admin' | 'member' | null;
  /** The API key acting (absent for an operator: the CLI, the import, tests). */
  keyId?: string;
}

/**
 * `D` is what the service is handed: a read's ctx (`Ctx`) has the database or a transaction, a
 * write's (`WriteCtx`) the transaction `write` opened, which the functions that only make sense
 * inside one (locks, deferred statements, after-commit work) take (docs/architecture.md §Database layer).
 */
export interface Ctx<D extends Executor = Executor> {
  /** The database, or the transaction of the request. */
  db: D;
  actor: Actor;
  /** The one clock of the request or command, ms since epoch: every timestamp and expiry check uses it. */
  now: number;
  links: HttpLinks;
}

/** The ctx of a service function that writes: ctx.db is the transaction `write` opened. */
export type WriteCtx = Ctx<Tx>;

/** The ctx of work that acts on no workspace: creating or listing workspaces, background jobs. */
export type SystemCtx<D extends Executor = Executor> = Pick<Ctx<D>, 'db' | 'now'>;

const NO_LINKS = createHttpLinks(undefined);

export function systemCtx<D extends Executor>(db: D, now: number = Date.now()): SystemCtx<D> {
  return { db, now };
}

/** An operator (the CLI, the import, the demo, tests) acting on one workspace with the workspace's authority. */
export function operatorCtx<D extends Executor>(db: D, workspaceId: string, opts: { now?: number; links?: HttpLinks } = {}): Ctx<D> {
  return { db, actor: { workspaceId, subjectType: 'workspace', userId: null, role: null }, now: opts.now ?? Date.now(), links: opts.links ?? NO_LINKS };
}
