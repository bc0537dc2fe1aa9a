// SQL of API keys. The lookup by hash is a prepared read: every request that is not cached makes it.
import { prepared, type Executor } from '../db/index.ts';
import type { ApiKeysTable } from './tables.ts';

export type KeyRow = ApiKeysTable;

/** A key with its user's role, as the authenticator needs it. */
export interface AuthKeyRow extends ApiKeysTable {
  user_role: 'admin' | 'member' | null;
}

const findKeyQuery = prepared((db: Executor, hash: string) =>
  db
    .selectFrom('api_keys')
    .leftJoin('users', 'users.id', 'api_keys.user_id')
    .selectAll('api_keys')
    .select('users.role as user_role')
    .where('api_keys.secret_hash', '=', hash),
);

export async function findKeyByHash(db: Executor, hash: string): Promise<AuthKeyRow | undefined> {
  return (await findKeyQuery(db, hash))[0];
}

export async function insertKey(db: Executor, row: KeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function listKeys(db: Executor, workspaceId: string): Promise<KeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/** The key after revoking it; `changed` is false when it was revoked already (or does not exist). */
export async function revokeKey(db: Executor, id: string, at: string): Promise<{ row: KeyRow | undefined; changed: boolean }> {
  const r = await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return { row, changed: Number(r.numUpdatedRows) === 1 };
}

/** The keys whose listed prefix is `prefix`, of any workspace (an operator's lookup: no index). */
export async function keysWithPrefix(db: Executor, prefix: string): Promise<KeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).orderBy('id').execute();
}

export async function touchKey(db: Executor, id: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
