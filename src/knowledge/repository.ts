// Knowledge: the files a user or a workspace has made available to the assistant. An entry is
// written 'pending' when a knowledge-purpose upload session is created, becomes 'active' when the
// file completes, and is removed when the session is cancelled or expires.
import type { Executor } from '../db/index.ts';
import { newId, isoNow } from '../lib/ids.ts';

export interface KnowledgeOwner {
  type: 'user' | 'workspace';
  userId: string | null;
}

export async function addPendingEntry(db: Executor, workspaceId: string, fileId: string, owner: KnowledgeOwner, now: number): Promise<void> {
  await db
    .insertInto('knowledge_entries')
    .values({
      id: newId('kn', now),
      workspace_id: workspaceId,
      file_id: fileId,
      owner_type: owner.type,
      user_id: owner.userId,
      state: 'pending',
      created_at: isoNow(now),
      added_at: null,
    })
    .execute();
}

/** Adds an entry that is active at once (imported files are complete). */
export async function addActiveEntry(db: Executor, workspaceId: string, fileId: string, owner: KnowledgeOwner, now: number): Promise<void> {
  await db.deleteFrom('knowledge_entries').where('file_id', '=', fileId).execute();
  await db
    .insertInto('knowledge_entries')
    .values({
      id: newId('kn', now),
      workspace_id: workspaceId,
      file_id: fileId,
      owner_type: owner.type,
      user_id: owner.userId,
      state: 'active',
      created_at: isoNow(now),
      added_at: isoNow(now),
    })
    .execute();
}

export async function activateEntry(db: Executor, fileId: string, now: number): Promise<void> {
  await db
    .updateTable('knowledge_entries')
    .set({ state: 'active', added_at: isoNow(now) })
    .where('file_id', '=', fileId)
    .where('state', '=', 'pending')
    .execute();
}

export async function dropPendingEntry(db: Executor, fileId: string): Promise<void> {
  await db.deleteFrom('knowledge_entries').where('file_id', '=', fileId).where('state', '=', 'pending').execute();
}

export interface KnowledgeRow {
  id: string;
  owner_type: 'user' | 'workspace';
  user_id: string | null;
  file_id: string;
  added_at: string | null;
  filename: string;
  mime_type: string;
  size_bytes: number;
}

/** Active entries of a workspace whose files are complete, newest first; narrowed to one user or owner type. */
export async function listEntries(db: Executor, workspaceId: string, opts: { userId?: string; owner?: 'user' | 'workspace' }): Promise<KnowledgeRow[]> {
  let q = db
    .selectFrom('knowledge_entries as k')
    .innerJoin('files as f', 'f.id', 'k.file_id')
    .select(['k.id', 'k.owner_type', 'k.user_id', 'k.file_id', 'k.added_at', 'f.filename', 'f.mime_type', 'f.size_bytes'])
    .where('k.workspace_id', '=', workspaceId)
    .where('k.state', '=', 'active')
    .where('f.status', '=', 'COMPLETED');
  if (opts.userId !== undefined) q = q.where('k.user_id', '=', opts.userId);
  if (opts.owner !== undefined) q = q.where('k.owner_type', '=', opts.owner);
  return q.orderBy('k.added_at', 'desc').orderBy('k.id', 'desc').execute();
}
