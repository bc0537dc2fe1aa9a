// SQL of users. The users of a workspace are counted in workspace_user_counts and ranked newest
// first (docs/pages.md), both kept by insertUser (users are never deleted), so that a page of
// members at any offset, and its totalCount, cost what the first does.
import { sql } from 'kysely';
import { chunks, defineRank, isUniqueViolation, lockPartition, rankInsert, rankPage, inWrite, type Executor } from '../db/index.ts';
import { byName, lookupExternalIds, named } from '../import/repository.ts';
import { emailKey } from '../lib/email.ts';
import type { Page } from '../lib/paging.ts';
import type { UsersTable } from './tables.ts';

export type UserRow = UsersTable;

/** A workspace's users, newest first. */
export const USERS = defineRank({ name: 'users', table: 'users', by: ['workspace_id'], ts: 'created_at', id: 'id' });

/** False when the workspace has a user with this address already, in either form of its domain (its key). */
export async function insertUser(db: Executor, row: UserRow): Promise<boolean> {
  return insertUsers(db, row.workspace_id, [row]);
}

/**
 * Inserts users of one workspace together: false when one takes an address the workspace (or
 * another of them) holds already, which on PostgreSQL ends the transaction.
 */
export async function insertUsers(db: Executor, workspaceId: string, rows: readonly UserRow[]): Promise<boolean> {
  if (rows.length === 0) return true;
  try {
    await inWrite(db, async (tx) => {
      await lockPartition(tx, USERS, [workspaceId]);
      for (const part of chunks([...rows], 200)) await tx.insertInto('users').values(part).execute();
      await rankInsert(
        tx,
        USERS,
        [workspaceId],
        rows.map((r) => ({ ts: r.created_at, id: r.id })),
      );
      await tx
        .insertInto('workspace_user_counts')
        .values({ workspace_id: workspaceId, user_count: rows.length })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ user_count: sql`workspace_user_counts.user_count + ${rows.length}` }))
        .execute();
    });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/** The users of the workspace that hold `keys` (addresses' keys, src/lib/email.ts): key → user id. */
export async function emailKeyHolders(db: Executor, workspaceId: string, keys: readonly string[]): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  for (const part of chunks([...new Set(keys)]))
    for (const r of await db.selectFrom('users').select(['email_key', 'id']).where('workspace_id', '=', workspaceId).where('email_key', 'in', part).execute())
      if (r.email_key !== null) held.set(r.email_key, r.id);
  return held;
}

export type UserChanges = Pick<UserRow, 'email' | 'email_key' | 'first_name' | 'last_name' | 'profile_image_url' | 'role' | 'updated_at'>;

/** False when another user of the workspace has this address already, in either form of its domain. */
export async function updateUser(db: Executor, id: string, set: UserChanges): Promise<boolean> {
  try {
    await db.updateTable('users').set(set).where('id', '=', id).execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export async function findUser(db: Executor, workspaceId: string, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/**
 * The users of the workspace `ref` names: the one whose id it is, else those whose externalId or
 * email (in either form of its domain, its key) it is. More than one id is an ambiguous reference.
 */
export async function findUsersByRef(db: Executor, workspaceId: string, ref: string): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', ref), eb('external_id', '=', ref), eb('email_key', '=', emailKey(ref.trim()))]))
    .orderBy('id')
    .execute();
  const ids = rows.map((r) => r.id);
  return ids.includes(ref) ? [ref] : ids;
}

/** Newest first. */
export async function listUsers(db: Executor, workspaceId: string): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/** One page of the workspace's users, newest first, ties by id, and their number, from one snapshot. */
export async function pageUsers(db: Executor, workspaceId: string, page: Page): Promise<{ total: number; rows: UserRow[] }> {
  return rankPage<UserRow>(db, USERS, [workspaceId], page, true);
}

/** Which of these ids are users of the workspace (for relationships to members). */
export async function existingUserIds(db: Executor, workspaceId: string, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of chunks(ids)) {
    const rows = await db.selectFrom('users').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', part).execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}

export function usersByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, string>> {
  return lookupExternalIds(db, 'users', workspaceId, externalIds);
}

/** The workspace's users that import lines name (docs/import.md §Export), whole, by name. */
export function userRowsByName(db: Executor, workspaceId: string, names: readonly string[]): Promise<Map<string, UserRow>> {
  return byName(names, (part, by) => db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where(named(by, part)).execute());
}
