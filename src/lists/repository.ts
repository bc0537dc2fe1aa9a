// SQL of lists and memberships. Counts are kept (lists per workspace, members per list), and both
// orders are ranked (docs/pages.md) so that a page at any offset costs what the first does.
import { sql } from 'kysely';
import {
  chunks,
  deferred,
  deferredInsert,
  deferredRows,
  defineRank,
  keyedRead,
  lockedAgainstDelete,
  lockedForUpdate,
  lockPartition,
  partitionKey,
  preparedWrite,
  rankChangeAcross,
  rankDelete,
  rankInsert,
  rankPage,
  rankRebuild,
  type Executor,
  type Tx,
} from '../db/index.ts';
import type { Page } from '../lib/paging.ts';
import type { ListsTable } from './tables.ts';
import { byName, named } from '../import/repository.ts';

export type ListRow = ListsTable;

/** A workspace's lists, newest first; a list's members, by when they joined. */
export const LISTS = defineRank({ name: 'lists', table: 'lists', by: ['workspace_id'], ts: 'created_at', id: 'id', appends: true });
export const LIST_MEMBERS = defineRank({ name: 'list_members', table: 'list_members', by: ['list_id'], ts: 'added_at', id: 'entity_id' });

// A list's row, built and compiled once: every create inserts one.
const listRow = preparedWrite(
  (
    db: Executor,
    id: string,
    workspace_id: string,
    external_id: ListRow['external_id'],
    name: string,
    object_type: ListRow['object_type'],
    member_count: number,
    created_at: string,
    updated_at: string,
  ) => db.insertInto('lists').values({ id, workspace_id, external_id, name, object_type, member_count, created_at, updated_at }),
);

// Creates of a workspace's lists take its lock for inserts (docs/pages.md §Creates that only
// insert): they run side by side, each adding count deltas of its own. The statements answering
// nothing go out with COMMIT (src/db/pipeline.ts), so a create is one round trip.
export async function insertList(tx: Tx, row: ListRow): Promise<void> {
  await lockPartition(tx, LISTS, [row.workspace_id], 'insert');
  const { id, workspace_id, external_id, name, object_type, member_count, created_at, updated_at } = row;
  await deferredInsert(tx, listRow(tx, id, workspace_id, external_id, name, object_type, member_count, created_at, updated_at));
  await rankInsert(tx, LISTS, [row.workspace_id], [{ ts: row.created_at, id: row.id }]);
}

// GET /v1/lists/{id} is the hottest read: outside a transaction, the lists asked for in one turn
// are read together (src/db/keyed.ts); the workspace is checked here, as on every form.
const listById = keyedRead<ListRow>({ select: (db) => db.selectFrom('lists').selectAll(), key: 'id', keyOf: (row) => row.id });

export async function findList(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
  const [row] = await listById(db, id);
  return row?.workspace_id === workspaceId ? row : undefined;
}

/**
 * The list an update changes, locked against deletion where rows lock (PostgreSQL, in a
 * transaction): a delete that locked it first is waited for, and the list is then found gone
 * (404), never renamed or given members once it is in the trash (docs/trash.md §A record in the trash is gone from the live tables).
 */
export async function findListToChange(tx: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
  const row = await lockedAgainstDelete(tx, tx.selectFrom('lists').selectAll().where('id', '=', id)).executeTakeFirst();
  return row?.workspace_id === workspaceId ? row : undefined;
}

/**
 * The lists of `ids` live in the workspace, locked for a write of their names, members and counts
 * (an import's): their rows against deletion in id order by one read a chunk, then their members'
 * sets in that order (going out with the caller's next statement), as a delete of a member locks
 * them (docs/design.md §Database, "The order of locks"). A list whose delete commits while this
 * waits is not found.
 */
export async function listsToChange(tx: Tx, workspaceId: string, ids: readonly string[]): Promise<Map<string, ListRow>> {
  const out = new Map<string, ListRow>();
  for (const part of chunks([...new Set(ids)].sort()))
    for (const r of await lockedAgainstDelete(tx, tx.selectFrom('lists').selectAll().where('id', 'in', part).orderBy('id')).execute())
      if (r.workspace_id === workspaceId) out.set(r.id, r);
  for (const id of out.keys()) await lockPartition(tx, LIST_MEMBERS, [id]);
  return out;
}

/**
 * The list, locked for a delete where rows lock (PostgreSQL, in a transaction): a delete waits here
 * for a write that locked it against deletion (a restore putting members into it), then reads its
 * members with that write committed.
 */
export async function findListToDelete(tx: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
  const row = await lockedForUpdate(tx, tx.selectFrom('lists').selectAll().where('id', '=', id)).executeTakeFirst();
  return row?.workspace_id === workspaceId ? row : undefined;
}

/**
 * The same read sent at once, for a read that goes out alongside another statement (a member
 * page): gathered to the end of the turn, it could leave after the other's answer came, one
 * round trip later (docs/pages.md §Round trips of a page).
 */
export async function findListAlongside(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
  const [row] = await listById.now(db, id);
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
export async function addMembers(tx: Tx, listId: string, ids: string[], at: string): Promise<string[]> {
  if (ids.length === 0) return [];
  await lockPartition(tx, LIST_MEMBERS, [listId]);
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
export async function removeMembers(tx: Tx, listId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  await lockPartition(tx, LIST_MEMBERS, [listId]);
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

export interface MembershipRow {
  list_id: string;
  entity_id: string;
  added_at: string;
}

/**
 * The live lists `entityId` is a member of, their rows locked against deletion in list order by
 * the one read that finds them, then their members' sets locked (going out with the caller's next
 * statement). The API's writers of a list take its row before its members' set (docs/design.md
 * §Database, "The order of locks"): a list's delete holds the row (`findListToDelete`) before it
 * takes the set, so a delete or merge that took the set first and then waited for the row to
 * change its count would close a cycle. A list whose delete commits while this read waits is not
 * found; its members left with it, so the caller works from the rows its delete of the
 * memberships returns (`leaving`).
 */
async function lockListsOf(tx: Tx, entityId: string): Promise<string[]> {
  const held = tx.selectFrom('list_members').select('list_id').where('entity_id', '=', entityId);
  const rows = await lockedAgainstDelete(tx, tx.selectFrom('lists').select('id').where('id', 'in', held).orderBy('id')).execute();
  for (const r of rows) await lockPartition(tx, LIST_MEMBERS, [r.id]);
  return rows.map((r) => r.id);
}

/** The delete of every membership of `entityId`, answering the rows it removed. */
function leaving(tx: Tx, entityId: string) {
  return tx.deleteFrom('list_members').where('entity_id', '=', entityId).returning(['list_id', 'entity_id', 'added_at']);
}

const inListOrder = (a: MembershipRow, b: MembershipRow) => (a.list_id < b.list_id ? -1 : a.list_id > b.list_id ? 1 : 0);

/**
 * Counts memberships that left out of their lists: every list's ranked set with one statement per
 * level across the lists (docs/pages.md §Changes across partitions), the counters with one more.
 */
async function countOut(tx: Tx, rows: readonly MembershipRow[]): Promise<void> {
  if (rows.length === 0) return;
  await rankChangeAcross(
    tx,
    LIST_MEMBERS,
    rows.map((r) => ({ values: [r.list_id], removed: [{ ts: r.added_at, id: r.entity_id }] })),
  );
  await moveCounts(
    tx,
    rows.map((r) => r.list_id),
    -1,
  );
}

/**
 * Removes every membership of `entityId` (its record goes to the trash): unranked, uncounted,
 * returned. The lists are locked before the rows leave, and only the rows the delete removed are
 * counted out and returned: a list deleted meanwhile keeps its members in its own entry, and its
 * record's entry holds none of them. Two round trips for any number of lists (one when there are
 * none); the counts go out with the caller's next statement (src/db/pipeline.ts).
 */
export async function takeMemberships(tx: Tx, entityId: string): Promise<MembershipRow[]> {
  if ((await lockListsOf(tx, entityId)).length === 0) return [];
  const rows = (await leaving(tx, entityId).execute()).sort(inListOrder);
  await countOut(tx, rows);
  return rows;
}

/**
 * Moves every membership of `from` to `to` (a merge, docs/merge.md §Links): a list that held both
 * keeps `to`'s. The lists are locked, then `from`'s rows leave and `to`'s rows in those lists are
 * read, in one round trip: only the memberships the delete removed move, so a list deleted
 * meanwhile is never given `to` (its entry holds `from`'s membership, which stands for `to`).
 * Returns the memberships `from` left and those `to` gained.
 */
export async function moveMemberships(tx: Tx, from: string, to: string): Promise<{ left: MembershipRow[]; joined: MembershipRow[] }> {
  const lists = await lockListsOf(tx, from);
  if (lists.length === 0) return { left: [], joined: [] };
  const gone = await deferredRows(tx, leaving(tx, from));
  const there = new Set<string>();
  for (const part of chunks(lists))
    for (const r of await tx.selectFrom('list_members').select('list_id').where('entity_id', '=', to).where('list_id', 'in', part).execute())
      there.add(r.list_id);
  const left = [...(gone.rows ?? [])].sort(inListOrder);
  await countOut(tx, left);
  const joined = left.filter((r) => !there.has(r.list_id)).map((r) => ({ ...r, entity_id: to }));
  await addMemberships(tx, joined);
  return { left, joined };
}

/** Adds `by` to the member count of each of `listIds` (distinct), in one statement per chunk. */
async function moveCounts(tx: Tx, listIds: readonly string[], by: 1 | -1): Promise<void> {
  for (const part of chunks([...listIds]))
    await deferred(
      tx,
      tx
        .updateTable('lists')
        .set({ member_count: sql<number>`member_count + ${by}` })
        .where('id', 'in', part),
    );
}

/**
 * Puts memberships back with their first `added_at` (a restore); those already there are left.
 * Returns those added. The lists are live, held against deletion by the caller (existingLists),
 * and locked here before the one read that finds which are there, so no writer of them adds one
 * meanwhile; the writes then go out with the caller's next statement.
 */
export async function putMemberships(tx: Tx, rows: readonly MembershipRow[]): Promise<MembershipRow[]> {
  const sorted = [...rows].sort(inListOrder);
  for (const r of sorted) await lockPartition(tx, LIST_MEMBERS, [r.list_id]);
  const there = new Set<string>();
  for (const part of chunks(sorted, 300))
    for (const r of await tx
      .selectFrom('list_members')
      .select(['list_id', 'entity_id'])
      .where((eb) => eb.or(part.map((m) => eb.and([eb('list_id', '=', m.list_id), eb('entity_id', '=', m.entity_id)]))))
      .execute())
      there.add(`${r.list_id}\u0000${r.entity_id}`);
  const added = sorted.filter((r) => {
    const key = `${r.list_id}\u0000${r.entity_id}`;
    if (there.has(key)) return false;
    there.add(key);
    return true;
  });
  await addMemberships(tx, added);
  return added;
}

/** Inserts memberships none of which is there, their lists locked: ranked and counted in. */
async function addMemberships(tx: Tx, added: readonly MembershipRow[]): Promise<void> {
  if (added.length === 0) return;
  for (const part of chunks([...added], 500)) await deferred(tx, tx.insertInto('list_members').values(part));
  // Counted in with one statement per level across the lists (docs/pages.md §Changes across partitions).
  const byList = new Map<string, { ts: string; id: string }[]>();
  for (const r of added) byList.set(r.list_id, [...(byList.get(r.list_id) ?? []), { ts: r.added_at, id: r.entity_id }]);
  await rankChangeAcross(
    tx,
    LIST_MEMBERS,
    [...byList].map(([list, keys]) => ({ values: [list], added: keys })),
  );
  // A list holds an entity once: each list of `added` gains one member.
  const byEntity = new Map<string, string[]>();
  for (const r of added) byEntity.set(r.entity_id, [...(byEntity.get(r.entity_id) ?? []), r.list_id]);
  for (const lists of byEntity.values()) await moveCounts(tx, lists, 1);
}

/** The lists of `ids` that are live in the workspace, by id; one read. */
export async function findLists(db: Executor, workspaceId: string, ids: readonly string[]): Promise<Map<string, ListRow>> {
  const out = new Map<string, ListRow>();
  for (const part of chunks([...new Set(ids)]))
    for (const r of await db.selectFrom('lists').selectAll().where('workspace_id', '=', workspaceId).where('id', 'in', part).execute()) out.set(r.id, r);
  return out;
}

/**
 * Which of `ids` are lists. In a write on PostgreSQL the lists found stay locked against deletion
 * until it commits: a restore never puts a member into a list moved to the trash meanwhile
 * (docs/trash.md §A record in the trash is gone from the live tables).
 */
export async function existingLists(db: Executor, ids: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const part of chunks([...ids]))
    for (const r of await lockedAgainstDelete(db, db.selectFrom('lists').select('id').where('id', 'in', part)).execute()) out.add(r.id);
  return out;
}

/** Takes a list out of its tables (the trash): its row, its members and both rankings. Returns the members. */
export async function takeList(tx: Tx, row: ListRow): Promise<MembershipRow[]> {
  await lockPartition(tx, LISTS, [row.workspace_id]);
  await lockPartition(tx, LIST_MEMBERS, [row.id]);
  const members = await tx.selectFrom('list_members').selectAll().where('list_id', '=', row.id).execute();
  await tx.deleteFrom('list_members').where('list_id', '=', row.id).execute();
  // The members' partition is emptied whole: its entries go with it, and a restore counts it again.
  await sql`delete from rank_buckets where scope = ${partitionKey(LIST_MEMBERS, [row.id])}`.execute(tx);
  await tx.deleteFrom('lists').where('id', '=', row.id).execute();
  await rankDelete(tx, LISTS, [row.workspace_id], [{ ts: row.created_at, id: row.id }]);
  return members;
}

/** Puts a list back with `members` (those whose records are live), counted and ranked again. */
export async function putList(tx: Tx, row: ListRow, members: readonly MembershipRow[]): Promise<void> {
  await lockPartition(tx, LISTS, [row.workspace_id]);
  await lockPartition(tx, LIST_MEMBERS, [row.id]);
  await tx
    .insertInto('lists')
    .values({ ...row, member_count: members.length })
    .execute();
  await rankInsert(tx, LISTS, [row.workspace_id], [{ ts: row.created_at, id: row.id }]);
  for (const part of chunks([...members], 300)) await tx.insertInto('list_members').values(part).execute();
  await rankRebuild(tx, LIST_MEMBERS, [row.id]);
}

/** Serializes the writers of the workspace's lists listing (a delete against a delete). */
export function lockLists(tx: Tx, workspaceId: string): Promise<void> {
  return lockPartition(tx, LISTS, [workspaceId]);
}

/** The workspace's lists that these names name (docs/import.md §Export), by name. */
export function listsByExternalId(db: Executor, workspaceId: string, externalIds: readonly string[]): Promise<Map<string, ListRow>> {
  return byName(externalIds, (part, by) => db.selectFrom('lists').selectAll().where('workspace_id', '=', workspaceId).where(named(by, part)).execute());
}

/** Every member of a list, in the order they joined (an import replacing them, an export). */
export async function membersInOrder(db: Executor, listId: string): Promise<{ entity_id: string; added_at: string }[]> {
  return db.selectFrom('list_members').select(['entity_id', 'added_at']).where('list_id', '=', listId).orderBy('added_at').orderBy('entity_id').execute();
}

/** A page of the workspace's lists, oldest first, after the list `after` (created_at, id). */
export async function listsAfter(db: Executor, workspaceId: string, after: { createdAt: string; id: string } | undefined, limit: number): Promise<ListRow[]> {
  let q = db.selectFrom('lists').selectAll().where('workspace_id', '=', workspaceId);
  if (after) q = q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
  return q.orderBy('created_at').orderBy('id').limit(limit).execute();
}
