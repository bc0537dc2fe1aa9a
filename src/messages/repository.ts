// Message reads, filtered and leveled by channel visibility inside the SQL (docs/design.md §Message
// visibility, one rule in src/channels/visibility.ts shared with the channel reads): the database
// returns only messages the caller may see, with the access level, and joins a message's text only
// where that level is FULL. Nothing is cached: a membership or
// visibility change applies to the next statement. Pages come from the ranked index of
// docs/pages.md, a workspace's messages cut into parts: the shared part (every channel but the
// private ones) and one part per private channel; a caller counts and reads the shared part and
// the private channels it is a member of.
import { sql } from 'kysely';
import { accessLevel, type Caller, fullText, visible, visibleText } from '../channels/visibility.ts';
import {
  chunks,
  defineRank,
  lockPartition,
  rankChange,
  rankMoveRows,
  rankPartedPage,
  type Executor,
  type PartedRead,
  type RankKey,
  type Tx,
} from '../db/index.ts';
import type { Page } from '../lib/paging.ts';
import type { MessagesTable } from './tables.ts';
import { byName, named } from '../import/repository.ts';

export type { Caller };

export type AccessLevel = 'FULL' | 'METADATA';

/** A message as a caller sees it: its row without the tenancy columns, plus what it may read. */
export interface MessageRow extends Omit<MessagesTable, 'workspace_id' | 'channel_visibility'> {
  access: AccessLevel;
  /** null unless access is FULL. */
  text: string | null;
}

/** A workspace's messages, newest $sentAt first; a message of a private channel is in that channel's part. */
export const MESSAGES = defineRank({
  name: 'messages',
  table: 'messages',
  by: ['workspace_id'],
  ts: 'sent_at',
  id: 'id',
  part: { column: 'channel_id', when: { column: 'channel_visibility', value: 'private' } },
});

/** A message's key and part in MESSAGES. */
export function rankKey(m: Pick<MessagesTable, 'id' | 'sent_at' | 'channel_id' | 'channel_visibility'>): RankKey {
  return { ts: m.sent_at, id: m.id, part: m.channel_visibility === 'private' ? m.channel_id : '' };
}

const COLUMNS = 'm.id, m.external_id, m.channel_id, m.sent_at, m.edited_at, m.provider, m.provider_thread_id, m.text_type, m.created_at, m.updated_at';

/** How a caller reads MESSAGES: its parts, and each row of a page with its access level, re-checked against the channel. */
export function messageReader(c: Caller): PartedRead {
  const user = c.userId !== null;
  return {
    name: user ? 'user' : 'workspace',
    parts: (p) =>
      `select cast('' as text) as part` +
      (user
        ? ` union all select cm.channel_id from channel_members cm join channels c on c.id = cm.channel_id
          where cm.user_id = ${p('user')} and c.workspace_id = ${p('by0')} and c.visibility = 'private'`
        : ''),
    rows: (p, page) => {
      const u = user ? p('user') : null;
      const full = fullText('c', u);
      return `select m.sent_at as rank_ts, m.id as rank_id, ${COLUMNS}, case when ${full} then 'FULL' else 'METADATA' end as access,
          case when ${full} then (select x.text from message_texts x where x.message_id = m.id) end as text
        from ${page} m join channels c on c.id = m.channel_id and c.workspace_id = ${p('by0')} and ${visibleText('c', u)}`;
    },
    args: user ? { user: c.userId } : {},
  };
}

/** A page of the messages the caller sees, newest first, and how many it sees, from one snapshot. */
export async function findPage(db: Executor, c: Caller, page: Page): Promise<{ total: number; rows: MessageRow[] }> {
  return rankPartedPage<MessageRow>(db, MESSAGES, [c.workspaceId], page, messageReader(c));
}

export async function findOne(db: Executor, c: Caller, id: string): Promise<MessageRow | undefined> {
  const r = await sql<MessageRow>`
    select ${sql.raw(COLUMNS)}, v.access, t.text
    from messages m
    join (select c.id, ${accessLevel(c)} as access from channels c where c.workspace_id = ${c.workspaceId} and ${visible(c)}) v on v.id = m.channel_id
    left join message_texts t on t.message_id = m.id and v.access = 'FULL'
    where m.id = ${id} and m.workspace_id = ${c.workspaceId}`.execute(db);
  return r.rows[0];
}

/** File ids linked to these messages, in order; ask only for messages read at FULL. */
export async function filesOf(db: Executor, messageIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (messageIds.length === 0) return out;
  const rows = await db
    .selectFrom('message_files')
    .select(['message_id', 'file_id'])
    .where('message_id', 'in', messageIds)
    .orderBy('message_id')
    .orderBy('position')
    .execute();
  for (const r of rows) {
    const list = out.get(r.message_id) ?? [];
    list.push(r.file_id);
    out.set(r.message_id, list);
  }
  return out;
}

// The writes of the import.

/** A message as it is stored: its id, channel and key in MESSAGES. */
export type StoredMessage = Pick<MessagesTable, 'id' | 'sent_at' | 'channel_id' | 'channel_visibility'>;

/** Existing messages by name (docs/import.md §Export), with the channel each is in now and its key. */
export async function messagesByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, StoredMessage>> {
  const rows = await byName(externalIds, (part, by) =>
    db
      .selectFrom('messages')
      .select(['id', 'external_id', 'channel_id', 'sent_at', 'channel_visibility'])
      .where('workspace_id', '=', workspaceId)
      .where(named(by, part))
      .execute(),
  );
  return new Map([...rows].map(([name, { external_id: _, ...r }]) => [name, r]));
}

/** Call before writing a workspace's messages (docs/pages.md: writers of a partition queue). */
export async function lockMessages(tx: Tx, workspaceId: string): Promise<void> {
  await lockPartition(tx, MESSAGES, [workspaceId]);
}

/** Messages by name (docs/import.md §Export) with their rows and texts as stored, for what a re-import changes of them. */
export function storedMessagesByExternalId(
  db: Executor,
  workspaceId: string,
  externalIds: string[],
): Promise<Map<string, MessagesTable & { text: string | null }>> {
  return byName(externalIds, (part, by) =>
    db
      .selectFrom('messages as m')
      .leftJoin('message_texts as t', 't.message_id', 'm.id')
      .selectAll('m')
      .select('t.text')
      .where('m.workspace_id', '=', workspaceId)
      .where(named(by, part, 'm'))
      .execute(),
  );
}

export async function updateMessage(
  db: Executor,
  id: string,
  set: Omit<MessagesTable, 'id' | 'workspace_id' | 'external_id' | 'created_at'>,
  text: string,
): Promise<void> {
  await db.updateTable('messages').set(set).where('id', '=', id).execute();
  await db.updateTable('message_texts').set({ text }).where('message_id', '=', id).execute();
}

/** A message row with its text, which is stored in its own table. */
export type NewMessageRow = MessagesTable & { external_id: string; text: string };

export async function insertMessages(db: Executor, rows: NewMessageRow[]): Promise<void> {
  for (const part of chunks(rows, 200)) {
    await db
      .insertInto('messages')
      .values(part.map(({ text: _t, ...m }) => m))
      .execute();
    await db
      .insertInto('message_texts')
      .values(part.map((m) => ({ message_id: m.id, text: m.text })))
      .execute();
  }
}

/** The workspace's messages in `removed` are gone or changed, those in `added` are new or changed (after lockMessages and the writes). */
export async function rankMessages(tx: Tx, workspaceId: string, change: { added: StoredMessage[]; removed: StoredMessage[] }): Promise<void> {
  await rankChange(tx, MESSAGES, [workspaceId], { added: change.added.map(rankKey), removed: change.removed.map(rankKey) });
}

/** A channel became private or stopped being so: its messages move between the shared part and its own (after lockMessages). */
export async function rankChannelMoved(tx: Tx, workspaceId: string, channelId: string, wasPrivate: boolean): Promise<void> {
  const rows = sql`select sent_at as ts, id from messages where channel_id = ${channelId}`;
  await rankMoveRows(tx, MESSAGES, [workspaceId], rows, wasPrivate ? channelId : '', wasPrivate ? '' : channelId);
}

/**
 * Sets the files of each message of `wanted` (in their order): a message whose files change moves
 * its `updated_at` to `at`; one whose files stay is not written. The stored files of all of them
 * are read at once, so a chunk of an import costs a few statements, not one a message.
 */
export async function replaceMessageFiles(db: Executor, wanted: ReadonlyMap<string, readonly string[]>, at: string): Promise<void> {
  const stored = new Map<string, string[]>();
  for (const part of chunks([...wanted.keys()]))
    for (const r of await db
      .selectFrom('message_files')
      .select(['message_id', 'file_id'])
      .where('message_id', 'in', part)
      .orderBy('message_id')
      .orderBy('position')
      .execute())
      stored.set(r.message_id, [...(stored.get(r.message_id) ?? []), r.file_id]);
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((f, i) => f === b[i]);
  const changed = [...wanted].filter(([id, files]) => !same(stored.get(id) ?? [], files)).map(([id]) => id);
  const rows = changed.flatMap((message_id) => (wanted.get(message_id) ?? []).map((file_id, position) => ({ message_id, file_id, position })));
  for (const part of chunks(changed)) await db.deleteFrom('message_files').where('message_id', 'in', part).execute();
  for (const part of chunks(rows)) await db.insertInto('message_files').values(part).execute();
  for (const part of chunks(changed)) await db.updateTable('messages').set({ updated_at: at }).where('id', 'in', part).execute();
}

/** A message as `rolodex export` reads it (docs/import.md §Export): its row, its text, and its channel's externalId, else id. */
export type ExportedMessage = MessagesTable & { text: string; channel: string };

/** Up to `limit` of the workspace's messages whose id is after `after`, by id (a keyset page). */
export async function messagesAfter(db: Executor, workspaceId: string, after: string, limit: number): Promise<ExportedMessage[]> {
  return db
    .selectFrom('messages as m')
    .innerJoin('message_texts as t', 't.message_id', 'm.id')
    .innerJoin('channels as c', 'c.id', 'm.channel_id')
    .selectAll('m')
    .select((eb) => ['t.text', eb.fn.coalesce('c.external_id', 'c.id').as('channel')])
    .where('m.workspace_id', '=', workspaceId)
    .where('m.id', '>', after)
    .orderBy('m.id')
    .limit(limit)
    .execute();
}
