// SQL of users.
import { isUniqueViolation } from '../db/database.ts';
import type { Executor } from '../db/types.ts';
import { lookupExternalIds } from '../import/repository.ts';
import type { UsersTable } from './tables.ts';

export type UserRow = UsersTable;

/** False when the workspace has a user with this email already. */
export async function insertUser(db: Executor, row: UserRow): Promise<boolean> {
  try {
    await db.insertInto('users').values(row).execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export async function updateUser(db: Executor, id: string, set: Pick<UserRow, 'email' | 'name' | 'role' | 'updated_at'>): Promise<void> {
  await db.updateTable('users').set(set).where('id', '=', id).execute();
}

export async function findUser(db: Executor, workspaceId: string, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/** A user of the workspace by id, externalId or email. */
export async function findUserByRef(db: Executor, workspaceId: string, ref: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', ref), eb('external_id', '=', ref), eb('email', '=', ref.trim().toLowerCase())]))
    .executeTakeFirst();
  return row?.id;
}

/** Newest first. */
export async function listUsers(db: Executor, workspaceId: string): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export function usersByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, string>> {
  return lookupExternalIds(db, 'users', workspaceId, externalIds);
}
