// SQL of lists and memberships. Counts are kept (lists per workspace, members per list), and both
// orders are ranked (docs/pages.md) so that a page at any offset costs what the first does.
import { sql } from 'kysely';
import type { Executor } from '../db/types.ts';
import { deferredInsert } from '../db/pipeline.ts';
import { prepared } from '../db/prepared.ts';
import { batchedRead, jsonKeys, KEYS } from '../db/batched.ts';
import type { Page } from '../lib/paging.ts';
import { chunks } from '../db/chunks.ts';
import { defineRank, lockScope, rankDelete, rankInsert, rankPage } from '../db/rank.ts';
import type { ListsTable } from './tables.ts';

export type ListRow = ListsTable;

/** A workspace's lists, newest first; a list's members, by when they joined. */
export const LISTS = defineRank({ name: 'lists', table: 'lists', by: ['workspace_id'], ts: 'created_at', id: 'id', appends: true });
export const LIST_MEMBERS = defineRank({ name: 'list_members', table: 'list_members', by: ['list_id'], ts: 'added_at', id: 'entity_id' });

// Creates of a workspace's lists take its lock for inserts (docs/pages.md §Creates that only
// insert): they run side by side, each adding count deltas of its own. The statements answering
// nothing go out with COMMIT (src/db/pipeline.ts), so a create is one round trip.
export async function insertList(tx: Executor, row: ListRow): Promise<void> {
  await lockScope(tx, LISTS, [row.workspace_id], 'insert');
  await deferredInsert(tx, tx.insertInto('lists').values(row));
  await rankInsert(tx, LISTS, [row.workspace_id], [{ ts: row.created_at, id: row.id }]);
}

// GET /v1/lists/{id} is the hottest read.
const findListQuery = prepared((db: Executor, id: string) => db.selectFrom('lists').selectAll().where('id', '=', id));

const findListsQuery = prepared((db: Executor, idsJson: string) => db.selectFrom('lists').selectAll().where('id', 'in', jsonKeys(db, idsJson)));

// Outside a transaction, the lists asked for in one turn are read together (src/db/batched.ts);
// the workspace is checked here, as the one-row statement checks it.
const listById = batchedRead<ListRow>({
  query: (db) =>
    db
      .selectFrom('lists')
      .selectAll()
      .where('id', '=', sql<string>`any(${KEYS})`),
  keyOf: (row) => row.id,
  single: (db, id) => findListQuery(db, id),
  many: (db, ids) => findListsQuery(db, JSON.stringify(ids)),
});

export async function findList(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
  const [row] = await listById(db, id);
  return row?.workspace_id === workspaceId ? row : undefined;
}

/**
 * The same read sent at once, for a read that goes out alongside another statement (a member
 * page): gathered to the end of the turn, it could leave after the other's answer came, one
 * round trip later (docs/pages.md §Round trips of a page).
 */
export async function findListAlongside(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
  const [row] = await findListQuery(db, id);
  return row?.workspace_id === workspaceId ? row : undefined;
}

/** Newest first, ties by id, with the count from the same snapshot. */
export async function pageLists(db: Executor, workspaceId: string, page: Page): Promise<{ total: number; rows: ListRow[] }> {
  return rankPage<ListRow>(db, LISTS, [workspaceId], page, true);
}

export async function pageMemberIds(db: Executor, listId: string, page: Page): Promise<{ total: number; ids: string[] }> {
  const { total, rows } = await rankPage(db, LIST_MEMBERS, [listId], page);
  return { total, ids: rows.map((r) => r.id) };
}

/** Adds members (existing ones are left as they are); returns how many were new. */
/** Adds the ids not yet members; returns those it added. */
export async function addMembers(tx: Executor, listId: string, ids: string[], at: string): Promise<string[]> {
  if (ids.length === 0) return [];
  await lockScope(tx, LIST_MEMBERS, [listId]);
  const added: string[] = [];
  for (const part of chunks(ids)) {
    const rows = await tx
      .insertInto('list_members')
      .values(part.map((entity_id) => ({ list_id: listId, entity_id, added_at: at })))
      .onConflict((oc) => oc.columns(['list_id', 'entity_id']).doNothing())
      .returning('entity_id')
      .execute();
    for (const r of rows) added.push(r.entity_id);
  }
  await rankInsert(
    tx,
    LIST_MEMBERS,
    [listId],
    added.map((id) => ({ ts: at, id })),
  );
  return added;
}

/** Removes the ids that are members; returns those it removed. */
export async function removeMembers(tx: Executor, listId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  await lockScope(tx, LIST_MEMBERS, [listId]);
  const removed: { ts: string; id: string }[] = [];
  for (const part of chunks(ids)) {
    const rows = await tx
      .deleteFrom('list_members')
      .where('list_id', '=', listId)
      .where('entity_id', 'in', part)
      .returning(['added_at', 'entity_id'])
      .execute();
    for (const r of rows) removed.push({ ts: r.added_at, id: r.entity_id });
  }
  await rankDelete(tx, LIST_MEMBERS, [listId], removed);
  return removed.map((r) => r.id);
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
