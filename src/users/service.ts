// Users of a workspace: administered by operators through the CLI and loaded by import, never by
// the public API.
import type { Ctx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import * as repo from './repository.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface UserInput {
  email: string;
  name?: string | null;
  role?: string;
  externalId?: string | null;
}

export function toResource(r: repo.UserRow) {
  return { id: r.id, workspaceId: r.workspace_id, email: r.email, name: r.name, role: r.role, externalId: r.external_id, createdAt: r.created_at };
}

/** The checked fields of a user; the InputError of a bad one names it (email, name or role). */
export function checkUser(input: UserInput): { email: string; name: string | null; role: 'admin' | 'member' } {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 320) throw new InputError(`invalid email "${input.email}"`, 'email');
  const role = input.role ?? 'member';
  if (role !== 'admin' && role !== 'member') throw new InputError(`role must be admin or member (got "${role}")`, 'role');
  const name = input.name?.trim() || null;
  if (name !== null && name.length > 255) throw new InputError('name must be at most 255 characters', 'name');
  return { email, name, role };
}

export async function createUser(ctx: Ctx, input: UserInput) {
  await requireWorkspace(ctx);
  const { email, name, role } = checkUser(input);
  const at = isoNow(ctx.now);
  const row: repo.UserRow = {
    id: newId('usr', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    external_id: input.externalId ?? null,
    email,
    name,
    role,
    created_at: at,
    updated_at: at,
  };
  if (!(await repo.insertUser(ctx.db, row))) throw new InputError(`a user with email "${email}" already exists in this workspace`, 'email');
  return toResource(row);
}

export async function listUsers(ctx: Ctx) {
  await requireWorkspace(ctx);
  return (await repo.listUsers(ctx.db, ctx.actor.workspaceId)).map(toResource);
}

/** Refuses a user id that is not one of the workspace's users. */
export async function requireUser(ctx: Ctx, input: { id: string }): Promise<void> {
  if (!(await repo.findUser(ctx.db, ctx.actor.workspaceId, input.id)))
    throw new InputError(`no user "${input.id}" in workspace ${ctx.actor.workspaceId}`, 'user');
}

/** A user of the workspace by id, externalId or email. */
export async function findUserRef(ctx: Ctx, input: { ref: string }): Promise<string> {
  const id = await repo.findUserByRef(ctx.db, ctx.actor.workspaceId, input.ref);
  if (!id) throw new InputError(`no user "${input.ref}" in workspace ${ctx.actor.workspaceId}`, 'user');
  return id;
}
