// Users of a workspace: administered by operators through the CLI and loaded by import, never by
// the public API.
import { isUniqueViolation } from '../db/database.ts';
import type { Executor } from '../db/types.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { InputError } from '../lib/errors.ts';
import { requireWorkspace } from '../workspaces/service.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface NewUser {
  workspaceId: string;
  email: string;
  name?: string | null;
  role?: string;
  externalId?: string | null;
}

export function checkUser(input: NewUser): { email: string; name: string | null; role: 'admin' | 'member' } {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 320) throw new InputError(`invalid email "${input.email}"`, 'email');
  const role = input.role ?? 'member';
  if (role !== 'admin' && role !== 'member') throw new InputError(`role must be admin or member (got "${role}")`, 'role');
  const name = input.name?.trim() || null;
  if (name !== null && name.length > 255) throw new InputError('name must be at most 255 characters', 'name');
  return { email, name, role };
}

export async function createUser(db: Executor, input: NewUser, now = Date.now()) {
  await requireWorkspace(db, input.workspaceId);
  const { email, name, role } = checkUser(input);
  const row = {
    id: newId('usr', now),
    workspace_id: input.workspaceId,
    external_id: input.externalId ?? null,
    email,
    name,
    role,
    created_at: isoNow(now),
    updated_at: isoNow(now),
  };
  try {
    await db.insertInto('users').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new InputError(`a user with email "${email}" already exists in this workspace`, 'email');
    throw err;
  }
  return describeUser(row);
}

export async function findUser(db: Executor, workspaceId: string, id: string) {
  return db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function listUsers(db: Executor, workspaceId: string) {
  const rows = await db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(describeUser);
}

export function describeUser(r: { id: string; workspace_id: string; email: string; name: string | null; role: string; external_id: string | null; created_at: string }) {
  return { id: r.id, workspaceId: r.workspace_id, email: r.email, name: r.name, role: r.role, externalId: r.external_id, createdAt: r.created_at };
}
