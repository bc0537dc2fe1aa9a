// Workspaces: administered by operators through the CLI, never by the public API.
import type { Ctx, SystemCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { bumpDefinitionsVersion } from '../definitions/repository.ts';
import { definitionWrite } from '../definitions/service.ts';
import { isPhoneCountry } from '../lib/phone.ts';
import * as repo from './repository.ts';
import { longerThan } from '../lib/chars.ts';

export function toResource(row: repo.WorkspaceRow) {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

export async function createWorkspace(ctx: SystemCtx, input: { name: string }) {
  const name = input.name.trim();
  if (name.length < 1 || longerThan(name, 255)) throw new InputError('workspace name must be 1 to 255 characters', 'name');
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

/**
 * Sets (or with null clears) the workspace's default country for telephone numbers
 * (docs/records.md §Telephone numbers) and returns it, upper-cased. The definitions carry it, so
 * their version moves, and it is written as a definition is, under the definitions lock taken
 * before anything is written: a definition write under way is waited for before the version's row
 * is, where taking that row first and the lock after (an import's workspace line, then its
 * records) closed a cycle with a definition write holding the lock and moving the version.
 */
export async function setDefaultCountry(ctx: Ctx, input: { country: string | null }): Promise<string | null> {
  await requireWorkspace(ctx);
  const country = input.country === null ? null : input.country.toUpperCase();
  if (country !== null && !isPhoneCountry(country)) throw new InputError('must be an ISO 3166-1 alpha-2 country code such as "DE"', 'default-country');
  return definitionWrite(ctx, async (ctx) => {
    await repo.setDefaultCountry(ctx.db, ctx.actor.workspaceId, country);
    await bumpDefinitionsVersion(ctx.db, ctx.actor.workspaceId);
    return country;
  });
}
