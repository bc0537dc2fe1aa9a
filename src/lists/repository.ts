// SQL of lists and memberships. Counts are kept (lists per workspace, members per list) so that
// totalCount is one row read however large a list grows.
import { sql } from 'kysely';
import type { Executor } from '../db/types.ts';
import { prepared } from '../db/prepared.ts';
import type { Page } from '../lib/paging.ts';
import { chunks } from '../db/chunks.ts';
import type { ListsTable } from './tables.ts';

export type ListRow = ListsTable;

export async function insertList(tx: Executor, row: ListRow): Promise<void> {
  await tx.insertInto('lists').values(row).execute();
  await tx
    .insertInto('workspace_list_counts')
    .values({ workspace_id: row.workspace_id, list_count: 1 })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ list_count: sql`workspace_list_counts.list_count + 1` }))
    .execute();
}

// GET /v1/lists/{id} is the hottest read.
const findListQuery = prepared((db: Executor, workspaceId: string, id: string) =>
  db.selectFrom('lists').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId),
);

export async function findList(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
  return (await findListQuery(db, workspaceId, id))[0];
}

export async function countLists(db: Executor, workspaceId: string): Promise<number> {
  const row = await db.selectFrom('workspace_list_counts').select('list_count').where('workspace_id', '=', workspaceId).executeTakeFirst();
  return Number(row?.list_count ?? 0);
}

/** Newest first, ties by id; offsets past the middle read the index from its other end. */
export async function pageLists(db: Executor, workspaceId: string, total: number, page: Page): Promise<ListRow[]> {
  const w = window(total, page);
  if (!w) return [];
  const dir = w.reverse ? 'asc' : 'desc';
  const rows = await db
    .selectFrom('lists')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at', dir)
    .orderBy('id', dir)
    .limit(w.limit)
    .offset(w.offset)
    .execute();
  return w.reverse ? rows.reverse() : rows;
}

export async function pageMemberIds(db: Executor, listId: string, total: number, page: Page): Promise<string[]> {
  const w = window(total, page);
  if (!w) return [];
  const dir = w.reverse ? 'asc' : 'desc';
  const rows = await db
    .selectFrom('list_members')
    .select('entity_id')
    .where('list_id', '=', listId)
    .orderBy('added_at', dir)
    .orderBy('entity_id', dir)
    .limit(w.limit)
    .offset(w.offset)
    .execute();
  const ids = rows.map((r) => r.entity_id);
  return w.reverse ? ids.reverse() : ids;
}

/** Where to read a newest-first page: from the front, or backwards from the end when nearer. */
export function window(total: number, page: Page): { offset: number; limit: number; reverse: boolean } | null {
  if (page.offset >= total) return null;
  const end = Math.min(page.offset + page.limit, total);
  if (page.offset * 2 <= total) return { offset: page.offset, limit: end - page.offset, reverse: false };
  return { offset: total - end, limit: end - page.offset, reverse: true };
}

/** Adds members (existing ones are left as they are); returns how many were new. */
export async function addMembers(tx: Executor, listId: string, ids: string[], at: string): Promise<number> {
  let added = 0;
  for (const part of chunks(ids)) {
    const r = await tx
      .insertInto('list_members')
      .values(part.map((entity_id) => ({ list_id: listId, entity_id, added_at: at })))
      .onConflict((oc) => oc.columns(['list_id', 'entity_id']).doNothing())
      .executeTakeFirst();
    added += Number(r.numInsertedOrUpdatedRows ?? 0);
  }
  return added;
}

export async function removeMembers(tx: Executor, listId: string, ids: string[]): Promise<number> {
  let removed = 0;
  for (const part of chunks(ids)) {
    const r = await tx.deleteFrom('list_members').where('list_id', '=', listId).where('entity_id', 'in', part).executeTakeFirst();
    removed += Number(r.numDeletedRows);
  }
  return removed;
}

export async function updateList(tx: Executor, id: string, changes: { name?: string; delta: number; at: string }): Promise<void> {
  await tx
    .updateTable('lists')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.delta !== 0 ? { member_count: sql<number>`member_count + ${changes.delta}` } : {}),
      updated_at: changes.at,
    })
    .where('id', '=', id)
    .execute();
}
