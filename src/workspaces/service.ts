// Workspaces: administered by operators through the CLI, never by the public API.
import type { Ctx, SystemCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import * as repo from './repository.ts';

export function toResource(row: repo.WorkspaceRow) {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

export async function createWorkspace(ctx: SystemCtx, input: { name: string }) {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 255) throw new InputError('workspace name must be 1 to 255 characters', 'name');
  const row = { id: newId('ws', ctx.now), name, created_at: isoNow(ctx.now) };
  await repo.insertWorkspace(ctx.db, row);
  return toResource(row);
}

export async function listWorkspaces(ctx: SystemCtx) {
  return (await repo.listWorkspaces(ctx.db)).map(toResource);
}

/** Operator commands name their workspace: refuses one that does not exist. */
export async function requireWorkspace(ctx: Ctx): Promise<void> {
  const id = ctx.actor.workspaceId;
  if (!(await repo.workspaceExists(ctx.db, id))) throw new InputError(`no workspace with id "${id}"`, 'workspace');
}
