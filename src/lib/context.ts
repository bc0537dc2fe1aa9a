// The first argument of every service function: fn(ctx, input). Transport-free: a route, a CLI
// command, the import, a test or a background job builds it, and the service neither knows nor
// cares which (docs/architecture.md §The service convention).
import type { Executor } from '../db/index.ts';
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

export interface Ctx {
  /** The database; inside write() the transaction of the request. */
  db: Executor;
  actor: Actor;
  /** The one clock of the request or command, ms since epoch: every timestamp and expiry check uses it. */
  now: number;
  links: HttpLinks;
}

/** The ctx of work that acts on no workspace: creating or listing workspaces, background jobs. */
export type SystemCtx = Pick<Ctx, 'db' | 'now'>;

const NO_LINKS = createHttpLinks(undefined);

export function systemCtx(db: Executor, now: number = Date.now()): SystemCtx {
  return { db, now };
}

/** An operator (the CLI, the import, the demo, tests) acting on one workspace with the workspace's authority. */
export function operatorCtx(db: Executor, workspaceId: string, opts: { now?: number; links?: HttpLinks } = {}): Ctx {
  return { db, actor: { workspaceId, subjectType: 'workspace', userId: null, role: null }, now: opts.now ?? Date.now(), links: opts.links ?? NO_LINKS };
}
