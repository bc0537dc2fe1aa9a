// SQL of channels and their members. A channel's visibility is copied onto its messages (the part
// of each in the ranked index of src/messages/repository.ts), so it is only ever changed here,
// with that copy and the index.
import { sql } from 'kysely';
import { chunks, isUniqueViolation, type Executor, type Tx } from '../db/index.ts';
import { lookupExternalIds } from '../import/repository.ts';
import type { Page } from '../lib/paging.ts';
import { lockMessages, rankChannelMoved } from '../messages/repository.ts';
import type { ChannelsTable, Visibility } from './tables.ts';
import { type Caller, visible } from './visibility.ts';

export type ChannelRow = ChannelsTable;

/** False when another channel of the workspace has this externalId already. */
export async function insertChannel(db: Executor, row: ChannelRow): Promise<boolean> {
  try {
    // The unique index on (workspace_id, external_id) decides, so two operators cannot both take one.
    await db.insertInto('channels').values(row).execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export async function updateChannel(db: Executor, id: string, set: Pick<ChannelRow, 'provider' | 'name' | 'updated_at'>): Promise<void> {
  await db.updateTable('channels').set(set).where('id', '=', id).execute();
}

/** A channel of the workspace by id or externalId. */
export async function findChannelByRef(db: Executor, workspaceId: string, ref: string): Promise<ChannelRow | undefined> {
  return db
    .selectFrom('channels')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', ref), eb('external_id', '=', ref)]))
    .executeTakeFirst();
}

export async function findChannel(db: Executor, id: string): Promise<Pick<ChannelRow, 'provider' | 'name' | 'visibility'>> {
  return db.selectFrom('channels').select(['provider', 'name', 'visibility']).where('id', '=', id).executeTakeFirstOrThrow();
}

export function channelsByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, string>> {
  return lookupExternalIds(db, 'channels', workspaceId, externalIds);
}

/**
 * Sets a channel's visibility, its messages' copy of it and their part; call inside one
 * transaction. The visibility it has already changes nothing, `updated_at` included.
 */
export async function setVisibility(db: Tx, channelId: string, v: Visibility, at: string): Promise<void> {
  const { workspace_id } = await db.selectFrom('channels').select('workspace_id').where('id', '=', channelId).executeTakeFirstOrThrow();
  // Queues behind any writer of the workspace's messages; the visibility is read after that.
  await lockMessages(db, workspace_id);
  const before = await db.selectFrom('channels').select(['workspace_id', 'visibility']).where('id', '=', channelId).executeTakeFirstOrThrow();
  if (before.visibility === v) return;
  await db.updateTable('channels').set({ visibility: v, updated_at: at }).where('id', '=', channelId).execute();
  await db.updateTable('messages').set({ channel_visibility: v }).where('channel_id', '=', channelId).where('channel_visibility', '<>', v).execute();
  if ((before.visibility === 'private') !== (v === 'private')) await rankChannelMoved(db, before.workspace_id, channelId, before.visibility === 'private');
}

export async function memberIds(db: Executor, channelId: string): Promise<string[]> {
  return (await db.selectFrom('channel_members').select('user_id').where('channel_id', '=', channelId).execute()).map((r) => r.user_id);
}

/**
 * Adds and removes members; adding a member twice or removing a non-member does nothing. A change
 * of `$members` is a change of the channel: its `updated_at` becomes `at` (docs/messages.md §Channels).
 * A channel may have tens of thousands of members, more than one statement binds (docs/messages.md
 * §Import): the ids go out in chunks.
 */
export async function changeMembers(db: Executor, channelId: string, add: string[], remove: string[], at: string): Promise<void> {
  let changed = 0;
  for (const part of chunks(remove))
    changed += Number(
      (await db.deleteFrom('channel_members').where('channel_id', '=', channelId).where('user_id', 'in', part).executeTakeFirst()).numDeletedRows,
    );
  const have = new Set<string>();
  for (const part of chunks(add))
    for (const r of await db.selectFrom('channel_members').select('user_id').where('channel_id', '=', channelId).where('user_id', 'in', part).execute())
      have.add(r.user_id);
  const rows = [...new Set(add)].filter((u) => !have.has(u)).map((user_id) => ({ channel_id: channelId, user_id, created_at: at }));
  // A concurrent change may add the same member meanwhile: adding it twice still does nothing.
  for (const part of chunks(rows)) {
    await db
      .insertInto('channel_members')
      .values(part)
      .onConflict((oc) => oc.columns(['channel_id', 'user_id']).doNothing())
      .execute();
    changed += part.length;
  }
  if (changed > 0) await db.updateTable('channels').set({ updated_at: at }).where('id', '=', channelId).execute();
}

export async function memberCount(db: Executor, channelId: string): Promise<number> {
  const r = await db
    .selectFrom('channel_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** Newest first, each with its number of members. */
export async function listChannels(db: Executor, workspaceId: string): Promise<Array<ChannelRow & { members: number | null }>> {
  return db
    .selectFrom('channels as c')
    .selectAll('c')
    .select((eb) =>
      eb
        .selectFrom('channel_members as cm')
        .whereRef('cm.channel_id', '=', 'c.id')
        .select((e) => e.fn.countAll<number>().as('n'))
        .as('members'),
    )
    .where('c.workspace_id', '=', workspaceId)
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id', 'desc')
    .execute();
}

/** Moves the kept message counts of channels by these amounts (after an import moved messages). */
export async function bumpMessageCounts(db: Executor, delta: Map<string, number>): Promise<void> {
  for (const [id, n] of delta) {
    if (n !== 0)
      await db
        .updateTable('channels')
        .set((eb) => ({ message_count: eb('message_count', '+', n) }))
        .where('id', '=', id)
        .execute();
  }
}

/** A channel as the API reads it: its row and its members' ids. */
export type VisibleChannel = ChannelRow & { memberIds: string[] };

async function withMembers(db: Executor, rows: ChannelRow[]): Promise<VisibleChannel[]> {
  if (rows.length === 0) return [];
  const members = await db
    .selectFrom('channel_members')
    .select(['channel_id', 'user_id'])
    .where(
      'channel_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('channel_id')
    .orderBy('created_at')
    .orderBy('user_id')
    .execute();
  const by = new Map<string, string[]>();
  for (const m of members) by.set(m.channel_id, [...(by.get(m.channel_id) ?? []), m.user_id]);
  return rows.map((r) => ({ ...r, memberIds: by.get(r.id) ?? [] }));
}

/** The channel if the caller sees it (src/channels/visibility.ts); undefined when it is unknown, another workspace's or invisible. */
export async function findVisibleChannel(db: Executor, caller: Caller, id: string): Promise<VisibleChannel | undefined> {
  const row = await db
    .selectFrom('channels as c')
    .selectAll('c')
    .where('c.id', '=', id)
    .where('c.workspace_id', '=', caller.workspaceId)
    .where(visible(caller))
    .executeTakeFirst();
  return row ? (await withMembers(db, [row]))[0] : undefined;
}

/** A page of the channels the caller sees, newest first, and how many it sees. */
export async function pageVisibleChannels(db: Executor, caller: Caller, page: Page): Promise<{ total: number; rows: VisibleChannel[] }> {
  const rows = await db
    .selectFrom('channels as c')
    .selectAll('c')
    .select(sql<number>`count(*) over ()`.as('total'))
    .where('c.workspace_id', '=', caller.workspaceId)
    .where(visible(caller))
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  // Past the end the page has no row to carry the count: count alone.
  const total =
    rows.length > 0
      ? Number(rows[0]?.total)
      : Number(
          (
            await db
              .selectFrom('channels as c')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('c.workspace_id', '=', caller.workspaceId)
              .where(visible(caller))
              .executeTakeFirstOrThrow()
          ).n,
        );
  return {
    total,
    rows: await withMembers(
      db,
      rows.map(({ total: _t, ...r }) => r),
    ),
  };
}

// The reads of `rolodex export` (docs/import.md §Export).

/** Up to `limit` of the workspace's channels whose id is after `after`, by id (a keyset page). */
export async function channelsAfter(db: Executor, workspaceId: string, after: string, limit: number): Promise<ChannelRow[]> {
  return db.selectFrom('channels').selectAll().where('workspace_id', '=', workspaceId).where('id', '>', after).orderBy('id').limit(limit).execute();
}

/** The members of these channels, each user named by its externalId, else its id; oldest first. */
export async function memberNames(db: Executor, channelIds: string[]): Promise<Array<{ channel_id: string; name: string }>> {
  if (channelIds.length === 0) return [];
  return db
    .selectFrom('channel_members as cm')
    .innerJoin('users as u', 'u.id', 'cm.user_id')
    .select((eb) => ['cm.channel_id', eb.fn.coalesce('u.external_id', 'u.id').as('name')])
    .where('cm.channel_id', 'in', channelIds)
    .orderBy('cm.channel_id')
    .orderBy('cm.created_at')
    .orderBy('cm.user_id')
    .execute();
}
