// Message reads, filtered and leveled by channel visibility inside the SQL (docs/design.md §Message
// visibility): the database returns only messages the caller may see, with the access level, and
// joins a message's text only where that level is FULL. Nothing is cached: a membership or
// visibility change applies to the next statement.
import { type RawBuilder, sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import type { Executor } from '../db/types.ts';
import type { MessagesTable } from './tables.ts';

export interface Caller {
  workspaceId: string;
  /** null for a workspace key: membership never applies. */
  userId: string | null;
}

export type AccessLevel = 'FULL' | 'METADATA';

/** How a page is found: walking the workspace's newest-first index and keeping visible rows, or
 *  gathering the visible channels' messages through the per-channel index and sorting them. */
export type Strategy = 'walk' | 'channels';

/** A message as a caller sees it: its row without the tenancy columns, plus what it may read. */
export interface MessageRow extends Omit<MessagesTable, 'workspace_id' | 'channel_visibility'> {
  access: AccessLevel;
  /** null unless access is FULL. */
  text: string | null;
}

// The caller's memberships; a workspace key has none.
function member(c: Caller, channel: RawBuilder<unknown>): RawBuilder<unknown> {
  if (c.userId === null) return sql`1 = 0`;
  return sql`${channel} in (select cm.channel_id from channel_members cm where cm.user_id = ${c.userId})`;
}

/** Channel `c` is visible: not private, or the caller is a member. */
function visible(c: Caller): RawBuilder<unknown> {
  return sql`(c.visibility <> 'private' or ${member(c, sql`c.id`)})`;
}

/** FULL when public or a member; otherwise (restricted, non-member) METADATA. */
function access(c: Caller): RawBuilder<unknown> {
  return sql`case when c.visibility = 'public' or ${member(c, sql`c.id`)} then 'FULL' else 'METADATA' end`;
}

/** Messages the caller may see, and all messages of the workspace, from the kept channel counts. */
export async function countVisible(db: Executor, c: Caller): Promise<{ visible: number; total: number }> {
  const r = await sql<{ visible: number | null; total: number | null }>`
    select sum(case when ${visible(c)} then c.message_count else 0 end) as visible, sum(c.message_count) as total
    from channels c where c.workspace_id = ${c.workspaceId}`.execute(db);
  const row = r.rows[0];
  return { visible: Number(row?.visible ?? 0), total: Number(row?.total ?? 0) };
}

function pageIds(c: Caller, limit: number, offset: number, strategy: Strategy): RawBuilder<unknown> {
  if (strategy === 'walk') {
    // Filters on columns of messages_workspace_sent only; the outer query re-checks every kept row
    // against the channel itself, so a stale copy could only ever drop a row, never expose one.
    return sql`select m.id, m.sent_at from messages m
      where m.workspace_id = ${c.workspaceId} and (m.channel_visibility <> 'private' or ${member(c, sql`m.channel_id`)})
      order by m.sent_at desc, m.id desc limit ${limit} offset ${offset}`;
  }
  return sql`select m.id, m.sent_at from channels c cross join messages m
      where c.workspace_id = ${c.workspaceId} and ${visible(c)} and m.channel_id = c.id
      order by m.sent_at desc, m.id desc limit ${limit} offset ${offset}`;
}

// One statement finds the page and reads it, so both see the same visibility.
function select(c: Caller, from: RawBuilder<unknown>): RawBuilder<MessageRow> {
  return sql<MessageRow>`
    select m.id, m.external_id, m.channel_id, m.sent_at, m.edited_at, m.provider, m.provider_thread_id, m.text_type,
      m.created_at, m.updated_at, v.access, t.text
    from ${from}
    join messages m on m.id = p.id
    join (select c.id, ${access(c)} as access from channels c where c.workspace_id = ${c.workspaceId} and ${visible(c)}) v on v.id = m.channel_id
    left join message_texts t on t.message_id = m.id and v.access = 'FULL'
    order by m.sent_at desc, m.id desc`;
}

export async function findPage(db: Executor, c: Caller, limit: number, offset: number, strategy: Strategy): Promise<MessageRow[]> {
  const r = await select(c, sql`(${pageIds(c, limit, offset, strategy)}) p`).execute(db);
  return r.rows;
}

export async function findOne(db: Executor, c: Caller, id: string): Promise<MessageRow | undefined> {
  const r = await select(c, sql`(select id from messages where id = ${id} and workspace_id = ${c.workspaceId}) p`).execute(db);
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

/** Existing messages by externalId, with the channel each is in now. */
export async function messagesByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, { id: string; channelId: string }>> {
  const found = new Map<string, { id: string; channelId: string }>();
  for (const part of chunks(externalIds)) {
    const rows = await db
      .selectFrom('messages')
      .select(['id', 'external_id', 'channel_id'])
      .where('workspace_id', '=', workspaceId)
      .where('external_id', 'in', part)
      .execute();
    for (const r of rows) found.set(r.external_id as string, { id: r.id, channelId: r.channel_id });
  }
  return found;
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

/** Sets a message's files, in order. */
export async function replaceMessageFiles(db: Executor, messageId: string, fileIds: string[]): Promise<void> {
  await db.deleteFrom('message_files').where('message_id', '=', messageId).execute();
  if (fileIds.length > 0)
    await db
      .insertInto('message_files')
      .values(fileIds.map((file_id, position) => ({ message_id: messageId, file_id, position })))
      .execute();
}
