// SQL of the trash (docs/trash.md): the entries, and the relationship rows and list memberships
// moved out of the live tables while a record is in the trash.
import { sql } from 'kysely';
import { chunks, deferred, lockedAgainstDelete, lockedForUpdate, preparedWrite, type Executor, type Tx } from '../db/index.ts';
import type { TrashLinksTable, TrashMembersTable, TrashTable, TrashTranscriptsTable } from './tables.ts';

export type TrashRow = TrashTable;
export type LinkRow = Omit<TrashLinksTable, 'trash_id'>;
export type MemberRow = Omit<TrashMembersTable, 'trash_id'>;

// The writes of an entry and its held rows are sent without waiting (src/db/pipeline.ts): nothing
// reads their answer, and an error surfaces with the next statement awaited or COMMIT.
export async function insertTrash(tx: Tx, row: TrashRow): Promise<void> {
  await deferred(tx, tx.insertInto('trash').values(row));
}

export async function findTrash(db: Executor, workspaceId: string, id: string): Promise<TrashRow | undefined> {
  const row = await db.selectFrom('trash').selectAll().where('id', '=', id).executeTakeFirst();
  return row?.workspace_id === workspaceId ? row : undefined;
}

/**
 * The entry, locked where rows lock (PostgreSQL) by a restore or a purge of it: of two, the second
 * waits, then finds it gone; a restore that moves rows under it (trashedAmong) commits first, so
 * that the restore or purge then finds them.
 */
export async function findTrashLocked(tx: Tx, workspaceId: string, id: string): Promise<TrashRow | undefined> {
  const [row] = (await tx.executeQuery<TrashRow>(entryLocked(tx, id).compile())).rows;
  return row?.workspace_id === workspaceId ? row : undefined;
}

// A restore's statements of the entry and its held rows never change shape: each is built and
// compiled once per dialect, and a restore only binds the entry's id (docs/performance.md §Writes
// compiled once). Built in a transaction only, so that the entry's read locks it where rows lock.
const entryLocked = preparedWrite((tx: Executor, id: string) => lockedForUpdate(tx, tx.selectFrom('trash').selectAll().where('id', '=', id)));
const entryDeleted = preparedWrite((tx: Executor, id: string) => tx.deleteFrom('trash').where('id', '=', id));
const linksReleased = preparedWrite((tx: Executor, trashId: string) =>
  tx.deleteFrom('trash_links').where('trash_id', '=', trashId).returning(['source_id', 'name', 'object_type', 'target_id', 'position']),
);
const membersReleased = preparedWrite((tx: Executor, trashId: string) =>
  tx.deleteFrom('trash_members').where('trash_id', '=', trashId).returning(['list_id', 'entity_id', 'added_at']),
);

/**
 * Which of `ids` are in the workspace's trash (as records of `objectType`, when given). In a write
 * on PostgreSQL the entries found stay locked against deletion until it commits: a restore or purge
 * of one waits for a restore that moves rows under it (docs/trash.md §Restore).
 */
export async function trashedAmong(db: Executor, workspaceId: string, ids: readonly string[], objectType?: string): Promise<Set<string>> {
  return new Set((await trashEnds(db, workspaceId, ids, objectType)).keys());
}

/** As trashedAmong, each entry with the primary it was merged into (null when it was deleted). */
export async function trashEnds(db: Executor, workspaceId: string, ids: readonly string[], objectType?: string): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const part of chunks([...ids])) {
    const rows = await lockedAgainstDelete(
      db,
      db.selectFrom('trash').select(['id', 'workspace_id', 'object_type', 'merged_into']).where('id', 'in', part),
    ).execute();
    for (const r of rows) if (r.workspace_id === workspaceId && (objectType === undefined || r.object_type === objectType)) out.set(r.id, r.merged_into);
  }
  return out;
}

export async function deleteTrash(tx: Tx, id: string): Promise<void> {
  await deferred(tx, entryDeleted(tx, id));
}

/**
 * The entries `ids` of the workspace, each locked as findTrashLocked locks it (a purge), in the
 * order of their ids, so that two purges of the same entries take their locks in one order.
 */
export async function findTrashesLocked(tx: Tx, workspaceId: string, ids: readonly string[]): Promise<TrashRow[]> {
  const out: TrashRow[] = [];
  for (const part of chunks([...ids]))
    out.push(...(await lockedForUpdate(tx, tx.selectFrom('trash').selectAll().where('id', 'in', part).orderBy('id')).execute()));
  return out.filter((r) => r.workspace_id === workspaceId);
}

/** The workspace's entries merged into one of `ids`, in the order of their ids (`trash_merged`). */
export function mergedInto(db: Executor, workspaceId: string, ids: readonly string[]) {
  return db.selectFrom('trash').select('id').where('workspace_id', '=', workspaceId).where('merged_into', 'in', ids).orderBy('id');
}

/**
 * Points the workspace's entries merged into a key of `ends` (a merged entry being purged) at its
 * value, the end of that entry's chain of merges (docs/trash.md §Purge). They are locked first, as
 * a purge or restore of them locks them: one under way is waited for, and a restore that read one
 * of them as an end (docs/trash.md §Restore) commits first. Each 300 keys are one read (through
 * `trash_merged`) and, when some entry points at one of them, one update.
 */
export async function repointMerged(tx: Tx, workspaceId: string, ends: ReadonlyMap<string, string>): Promise<void> {
  for (const part of chunks([...ends], 300)) {
    const froms = part.map(([from]) => from);
    const pointing = await lockedForUpdate(tx, mergedInto(tx, workspaceId, froms)).execute();
    if (pointing.length === 0) continue;
    const cases = sql.join(
      part.map(([from, end]) => sql`when ${from} then cast(${end} as text)`),
      sql` `,
    );
    await deferred(
      tx,
      tx
        .updateTable('trash')
        .set({ merged_into: sql<string>`case merged_into ${cases} end` })
        .where('workspace_id', '=', workspaceId)
        .where('merged_into', 'in', froms),
    );
  }
}

/** Deletes the entries `ids` (their purge). */
export async function deleteTrashes(tx: Tx, ids: readonly string[]): Promise<void> {
  for (const part of chunks([...ids])) await deferred(tx, tx.deleteFrom('trash').where('id', 'in', part));
}

/**
 * The workspace's trash, oldest first; `before`: deleted before that instant only; `locked`: each
 * entry locked as findTrashLocked locks it (a purge).
 */
export async function listTrash(db: Executor, workspaceId: string, opts: { type?: string; before?: string; locked?: boolean } = {}): Promise<TrashRow[]> {
  let q = db.selectFrom('trash').selectAll().where('workspace_id', '=', workspaceId);
  if (opts.type) q = q.where('object_type', '=', opts.type);
  if (opts.before) q = q.where('deleted_at', '<', opts.before);
  q = q.orderBy('deleted_at').orderBy('id');
  return (opts.locked ? lockedForUpdate(db, q) : q).execute();
}

/** Entries of every workspace deleted before `before` (the sweeper's retention), at most `limit`. */
export async function expiredTrash(db: Executor, before: string, limit: number): Promise<Pick<TrashRow, 'id' | 'workspace_id'>[]> {
  return db.selectFrom('trash').select(['id', 'workspace_id']).where('deleted_at', '<', before).orderBy('deleted_at').orderBy('id').limit(limit).execute();
}

/**
 * Moves every live relationship row touching `id` (as source or target) under the entry `trashId`,
 * without reading them back: nothing goes out that the caller waits for (src/db/pipeline.ts).
 * Each side is found through its own index, whatever the statistics say: a record's own rows by
 * the primary key, the rows others hold to it through the inverse index (target_id, name,
 * source_id), each then read by its key. One statement with `source_id = ? or target_id = ?` is
 * planned as a scan of the whole table on SQLite once ANALYZE has seen one target held by many
 * rows (an account's contacts), docs/performance.md §Plans that must not depend on statistics.
 */
export async function takeLinks(tx: Tx, trashId: string, id: string): Promise<void> {
  // CROSS JOIN keeps the inverse index outside on SQLite; DISTINCT folds the pairs of a source
  // that holds the record twice under one name.
  await deferred(
    tx,
    sql`insert into trash_links (trash_id, source_id, name, object_type, target_id, position)
      select ${trashId}, source_id, name, object_type, target_id, position from entity_relationships where source_id = ${id}
      union all
      select distinct ${trashId}, r.source_id, r.name, r.object_type, r.target_id, r.position
      from entity_relationships i cross join entity_relationships r
      where i.target_id = ${id} and i.source_id <> ${id} and r.source_id = i.source_id and r.name = i.name and r.target_id = i.target_id`,
  );
  await deferred(tx, tx.deleteFrom('entity_relationships').where('source_id', '=', id));
  await deferred(tx, tx.deleteFrom('entity_relationships').where('target_id', '=', id));
}

export async function holdLinks(tx: Tx, trashId: string, rows: readonly LinkRow[]): Promise<void> {
  for (const part of chunks(
    rows.map((r) => ({ trash_id: trashId, ...r })),
    1000,
  ))
    await deferred(tx, tx.insertInto('trash_links').values(part));
}

/** The highest position of the rows of `sourceId` under `name` that an entry holds, if any. */
export async function lastHeld(db: Executor, trashId: string, sourceId: string, name: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('trash_links')
    .select((eb) => eb.fn.max('position').as('p'))
    .where('trash_id', '=', trashId)
    .where('source_id', '=', sourceId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.p === null || row?.p === undefined ? undefined : Number(row.p);
}

/** The rows an entry holds, and drops them from it: one statement, which answers the rows it removed. */
export async function releaseLinks(tx: Tx, trashId: string): Promise<LinkRow[]> {
  return (await tx.executeQuery<LinkRow>(linksReleased(tx, trashId).compile())).rows;
}

export async function holdMembers(tx: Tx, trashId: string, rows: readonly MemberRow[]): Promise<void> {
  for (const part of chunks(
    rows.map((r) => ({ trash_id: trashId, ...r })),
    1000,
  ))
    await deferred(tx, tx.insertInto('trash_members').values(part));
}

/** The memberships an entry holds, and drops them from it, as releaseLinks. */
export async function releaseMembers(tx: Tx, trashId: string): Promise<MemberRow[]> {
  return (await tx.executeQuery<MemberRow>(membersReleased(tx, trashId).compile())).rows;
}

/**
 * Holds the transcript link of a meeting going to the trash, with its privacy and participants,
 * so that the transcript's bytes stay with who read the meeting at FULL (docs/files.md §Who
 * downloads the bytes); a meeting without a transcript holds nothing.
 */
export async function holdTranscript(
  tx: Tx,
  row: { id: string; workspace_id: string; privacy_setting: TrashTranscriptsTable['privacy_setting'] },
  fileId: string | null | undefined,
  participants: readonly string[],
): Promise<void> {
  if (!fileId) return;
  await deferred(
    tx,
    tx.insertInto('trash_transcripts').values({ id: row.id, workspace_id: row.workspace_id, file_id: fileId, privacy_setting: row.privacy_setting }),
  );
  const emails = [...new Set(participants)];
  if (emails.length > 0) await deferred(tx, tx.insertInto('trash_participants').values(emails.map((email) => ({ meeting_id: row.id, email }))));
}

/** Drops what holdTranscript held for the entry `id` (its restore or purge). */
export async function releaseTranscript(tx: Tx, id: string): Promise<void> {
  await deferred(tx, tx.deleteFrom('trash_participants').where('meeting_id', '=', id));
  await deferred(tx, tx.deleteFrom('trash_transcripts').where('id', '=', id));
}

/** Drops what holdTranscript held for the entries `ids` (their purge). */
export async function releaseTranscripts(tx: Tx, ids: readonly string[]): Promise<void> {
  for (const part of chunks([...ids])) {
    await deferred(tx, tx.deleteFrom('trash_participants').where('meeting_id', 'in', part));
    await deferred(tx, tx.deleteFrom('trash_transcripts').where('id', 'in', part));
  }
}

/**
 * Erases every held row that names one of `ids` on either end or is held by one; returns how many
 * of each. Each column is read through its own index.
 */
export async function eraseHeld(tx: Executor, ids: readonly string[]): Promise<{ links: number; members: number }> {
  const out = { links: 0, members: 0 };
  for (const part of chunks([...ids])) {
    for (const col of ['trash_id', 'source_id', 'target_id'] as const)
      out.links += Number((await tx.deleteFrom('trash_links').where(col, 'in', part).executeTakeFirst()).numDeletedRows);
    for (const col of ['trash_id', 'list_id', 'entity_id'] as const)
      out.members += Number((await tx.deleteFrom('trash_members').where(col, 'in', part).executeTakeFirst()).numDeletedRows);
  }
  return out;
}

/**
 * A page of the workspace's trashed records of one type (merged ones left out: their data lives in
 * the primary), in the order of deletion: after `after`, at most `limit`.
 */
export async function trashedRecordsPage(
  db: Executor,
  workspaceId: string,
  type: string,
  after: { deletedAt: string; id: string } | undefined,
  limit: number,
): Promise<TrashRow[]> {
  let q = db.selectFrom('trash').selectAll().where('workspace_id', '=', workspaceId).where('object_type', '=', type).where('merged_into', 'is', null);
  if (after) q = q.where((eb) => eb.or([eb('deleted_at', '>', after.deletedAt), eb.and([eb('deleted_at', '=', after.deletedAt), eb('id', '>', after.id)])]));
  return q.orderBy('deleted_at').orderBy('id').limit(limit).execute();
}

/** The held relationship rows whose source is one of `sourceIds`, whichever entry holds them. */
export async function heldLinksFrom(db: Executor, sourceIds: readonly string[]): Promise<LinkRow[]> {
  const out: LinkRow[] = [];
  for (const part of chunks([...sourceIds]))
    out.push(
      ...(await db.selectFrom('trash_links').select(['source_id', 'name', 'object_type', 'target_id', 'position']).where('source_id', 'in', part).execute()),
    );
  return out;
}

/** The entries among `ids` of the workspace's trashed records, merged ones left out. */
export async function trashedRecords(db: Executor, workspaceId: string, ids: readonly string[]): Promise<TrashRow[]> {
  const out: TrashRow[] = [];
  for (const part of chunks([...ids]))
    out.push(
      ...(await db.selectFrom('trash').selectAll().where('id', 'in', part).where('workspace_id', '=', workspaceId).where('merged_into', 'is', null).execute()),
    );
  return out;
}

/** The memberships of `listId` held for its members in the trash, whichever entry holds them. */
export async function heldMembersOf(db: Executor, listId: string): Promise<{ entity_id: string; added_at: string }[]> {
  return db.selectFrom('trash_members').select(['entity_id', 'added_at']).where('list_id', '=', listId).where('trash_id', '<>', listId).execute();
}
