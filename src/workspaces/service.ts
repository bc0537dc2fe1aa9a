// Workspaces: administered by operators through the CLI, never by the public API.
import type { Executor } from '../db/types.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';

export async function createWorkspace(db: Executor, name: string, now = Date.now()) {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 255) throw new InputError('workspace name must be 1 to 255 characters', 'name');
  const row = { id: newId('ws', now), name: trimmed, created_at: isoNow(now) };
  await db.insertInto('workspaces').values(row).execute();
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

export async function listWorkspaces(db: Executor) {
  const rows = await db.selectFrom('workspaces').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at }));
}

export async function requireWorkspace(db: Executor, id: string): Promise<void> {
  const row = await db.selectFrom('workspaces').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw new InputError(`no workspace with id "${id}"`, 'workspace');
}
