// SQL for files, their counts, knowledge entries and blob garbage. Writes that race (complete vs
// a new PUT, cancel vs complete, the sweeper vs anyone) are compare-and-set on status and blob
// key, so the loser sees zero rows changed instead of overwriting.
import { sql } from 'kysely';
import { chunks, defineRank, lockPartition, rankDelete, rankInsert, rankPage, type Executor, type Tx } from '../db/index.ts';
import { fullAccess as channelFullAccess } from '../channels/visibility.ts';
import { access as emailAccess, type Caller } from '../emails/repository.ts';
import { byName, lookupExternalIds, named } from '../import/repository.ts';
import { fullAccessSql } from '../meetings/repository.ts';
import type { FileSource, FilesTable } from './tables.ts';

export type FileRow = FilesTable;

/** A workspace's listable files, newest first (docs/pages.md). */
export const LISTED_FILES = defineRank({ name: 'files', table: 'files', by: ['workspace_id'], where: { source: 'api' }, ts: 'created_at', id: 'id' });

/** Inserts a file; `ranked: false` leaves ranking a batch to the caller (rankFiles). */
export async function insertFile(db: Tx, row: FileRow, opts: { ranked?: boolean } = {}): Promise<void> {
  const listed = isListable(row.source);
  if (listed && opts.ranked !== false) await lockPartition(db, LISTED_FILES, [row.workspace_id]);
  await db.insertInto('files').values(row).execute();
  if (!listed) return;
  await bumpCount(db, row.workspace_id, 1);
  if (opts.ranked !== false) await rankInsert(db, LISTED_FILES, [row.workspace_id], [{ ts: row.created_at, id: row.id }]);
}

/** Ranks files that became listable and unranks those that stopped being listable, in batches. */
export async function rankFiles(db: Tx, workspaceId: string, listed: FileRow[], unlisted: FileRow[]): Promise<void> {
  const key = (r: FileRow) => ({ ts: r.created_at, id: r.id });
  await rankInsert(db, LISTED_FILES, [workspaceId], listed.map(key));
  await rankDelete(db, LISTED_FILES, [workspaceId], unlisted.map(key));
}

export async function lockListing(db: Tx, workspaceId: string): Promise<void> {
  await lockPartition(db, LISTED_FILES, [workspaceId]);
}

export async function bumpCount(db: Executor, workspaceId: string, by: number): Promise<void> {
  await db
    .insertInto('file_counts')
    .values({ workspace_id: workspaceId, listable: by })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ listable: sql`file_counts.listable + ${by}` }))
    .execute();
}

export async function findFile(db: Executor, workspaceId: string, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/** The workspace's files among these ids, by id; the others are absent. */
export async function findFiles(db: Executor, workspaceId: string, ids: readonly string[]): Promise<Map<string, FileRow>> {
  const found = new Map<string, FileRow>();
  for (const part of chunks([...new Set(ids)])) {
    for (const r of await db.selectFrom('files').selectAll().where('workspace_id', '=', workspaceId).where('id', 'in', part).execute()) found.set(r.id, r);
  }
  return found;
}

/** By id alone: for the byte endpoints, whose signed token names the file. */
export async function findFileById(db: Executor, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Listable files newest first, ties by id, with their count from the same snapshot. */
export async function listFiles(db: Executor, workspaceId: string, limit: number, offset: number): Promise<{ rows: FileRow[]; total: number }> {
  return rankPage<FileRow>(db, LISTED_FILES, [workspaceId], { limit, offset }, true);
}

/** Moves a file from PENDING, only if it is still PENDING with this blob key; true when it did. */
export async function transition(
  db: Executor,
  id: string,
  from: { blobKey: string | null },
  set: Partial<Pick<FileRow, 'status' | 'md5' | 'size_bytes' | 'completed_at' | 'expires_at' | 'blob_key'>>,
  pendingUntilAfter?: string,
): Promise<boolean> {
  let q = db.updateTable('files').set(set).where('id', '=', id).where('status', '=', 'PENDING');
  q = from.blobKey === null ? q.where('blob_key', 'is', null) : q.where('blob_key', '=', from.blobKey);
  if (pendingUntilAfter !== undefined) q = q.where('expires_at', '>', pendingUntilAfter);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function addGarbage(db: Executor, blobKey: string, notBefore: string): Promise<void> {
  await db
    .insertInto('blob_garbage')
    .values({ blob_key: blobKey, not_before: notBefore })
    .onConflict((oc) => oc.column('blob_key').doUpdateSet({ not_before: sql`excluded.not_before` }))
    .execute();
}

export interface GarbageRow {
  blob_key: string;
  not_before: string;
}

/** Up to `limit` garbage rows due at `now`, after the row `after` in (not_before, blob_key) order (a keyset page). */
export async function dueGarbage(db: Executor, now: string, limit: number, after?: GarbageRow): Promise<GarbageRow[]> {
  let q = db.selectFrom('blob_garbage').select(['blob_key', 'not_before']).where('not_before', '<=', now);
  if (after)
    q = q.where((eb) =>
      eb.or([eb('not_before', '>', after.not_before), eb.and([eb('not_before', '=', after.not_before), eb('blob_key', '>', after.blob_key)])]),
    );
  return q.orderBy('not_before').orderBy('blob_key').limit(limit).execute();
}

export async function removeGarbage(db: Executor, blobKey: string, notBefore: string): Promise<void> {
  await db.deleteFrom('blob_garbage').where('blob_key', '=', blobKey).where('not_before', '=', notBefore).execute();
}

/** PENDING sessions past their deadline, oldest first. */
export async function overdueSessions(db: Executor, now: string, limit: number): Promise<FileRow[]> {
  return db.selectFrom('files').selectAll().where('status', '=', 'PENDING').where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
}

export function isListable(source: FileSource): boolean {
  return source === 'api';
}

/**
 * The COMPLETED files of these names, those another import line may name (docs/import.md §Rules): a
 * file the API has not completed has no bytes to attach, and an export leaves it out.
 */
export function completedByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, string>> {
  return lookupExternalIds(db, 'files', workspaceId, externalIds, { status: 'COMPLETED' });
}

/** Whole rows by name (docs/import.md §Export), for the import's update of files that exist. */
export function fileRowsByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, FileRow>> {
  return byName(externalIds, (part, by) => db.selectFrom('files').selectAll().where('workspace_id', '=', workspaceId).where(named(by, part)).execute());
}

export async function updateFile(db: Executor, id: string, set: Partial<Omit<FileRow, 'id' | 'workspace_id'>>): Promise<void> {
  await db.updateTable('files').set(set).where('id', '=', id).execute();
}

/** When the garbage row of this blob lets the sweeper delete it; undefined when there is none. */
export async function garbageNotBefore(db: Executor, blobKey: string): Promise<string | undefined> {
  return (await db.selectFrom('blob_garbage').select('not_before').where('blob_key', '=', blobKey).executeTakeFirst())?.not_before;
}

/** Forgets a blob's garbage row (its blob was adopted, or deleted already). */
export async function dropGarbage(db: Executor, blobKey: string): Promise<void> {
  await db.deleteFrom('blob_garbage').where('blob_key', '=', blobKey).execute();
}

/** The workspace's files that `rolodex export --files` begun at `by` writes: those COMPLETED by then. */
function exported(db: Executor, workspaceId: string, by: string) {
  return db
    .selectFrom('files')
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'COMPLETED')
    .where('completed_at', '<=', by)
    .where('blob_key', 'is not', null);
}

/** Up to `limit` of the files an export begun at `by` writes, whose id is after `after`, by id (a keyset page). */
export async function exportedFilesAfter(db: Executor, workspaceId: string, by: string, after: string, limit: number): Promise<FileRow[]> {
  return exported(db, workspaceId, by).selectAll().where('id', '>', after).orderBy('id').limit(limit).execute();
}

/** Id → externalId, else id, of those of these files that an export begun at `by` writes. */
export async function exportedFileNames(db: Executor, workspaceId: string, by: string, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunks([...new Set(ids)])) {
    const rows = await exported(db, workspaceId, by).select(['id', 'external_id']).where('id', 'in', part).execute();
    for (const r of rows) out.set(r.id, r.external_id ?? r.id);
  }
  return out;
}

/** What decides who may have a file's bytes (docs/files.md §Who downloads the bytes). */
export interface DownloadParents {
  /** The file is the transcript of a meeting, an attachment of an e-mail or a message's file. */
  linked: boolean;
  /** One of those the caller reads at FULL. */
  full: boolean;
  /** The user whose Knowledge holds the file (purpose knowledge_user), else null. */
  knowledgeOwner: string | null;
}

/**
 * The file's parents as the caller sees them, in one statement: one snapshot, so that an update
 * that moves a transcript or changes a meeting's privacy is seen wholly or not at all. The access
 * rules are the meetings', the e-mails' and the channels' own SQL; `email` is the caller's folded
 * address (undefined for a workspace key). A meeting in the trash still holds its transcript.
 * The parents are found through the indexes of migrations 0073, 0075 and 0076.
 */
export function downloadParentsQuery(caller: Caller, email: string | undefined, fileId: string) {
  const ws = caller.workspaceId;
  const meetings = (full: boolean) =>
    sql`exists (select 1 from meeting_contents c join meetings mt on mt.id = c.meeting_id
      where c.transcript_id = ${fileId} and mt.workspace_id = ${ws}${full ? sql` and ${fullAccessSql('mt', email)}` : sql``})`;
  const emails = (full: boolean) =>
    sql`exists (select 1 from email_files ef join emails e on e.id = ef.email_id join mailboxes mb on mb.id = e.mailbox_id
      where ef.file_id = ${fileId} and e.workspace_id = ${ws}${full ? sql` and ${emailAccess(caller, 'mb')} = 'FULL'` : sql``})`;
  const messages = (full: boolean) =>
    sql`exists (select 1 from message_files mf join messages m on m.id = mf.message_id join channels c on c.id = m.channel_id
      where mf.file_id = ${fileId} and m.workspace_id = ${ws}${full ? sql` and ${channelFullAccess(caller, 'c')}` : sql``})`;
  // A meeting in the trash holds its transcript still, under the same rule (src/trash/repository.ts holdTranscript).
  const trashed = (full: boolean) =>
    sql`exists (select 1 from trash_transcripts tt
      where tt.file_id = ${fileId} and tt.workspace_id = ${ws}${full ? sql` and ${fullAccessSql('tt', email, 'trash_participants')}` : sql``})`;
  return sql<{ linked: number; full_access: number; knowledge_owner: string | null }>`
    select case when ${meetings(false)} or ${trashed(false)} or ${emails(false)} or ${messages(false)} then 1 else 0 end as linked,
      case when ${meetings(true)} or ${trashed(true)} or ${emails(true)} or ${messages(true)} then 1 else 0 end as full_access,
      (select k.user_id from knowledge_entries k where k.file_id = ${fileId} and k.owner_type = 'user') as knowledge_owner`;
}

export async function downloadParents(db: Executor, caller: Caller, email: string | undefined, fileId: string): Promise<DownloadParents> {
  const row = (await downloadParentsQuery(caller, email, fileId).execute(db)).rows[0];
  return { linked: Number(row?.linked) === 1, full: Number(row?.full_access) === 1, knowledgeOwner: row?.knowledge_owner ?? null };
}
