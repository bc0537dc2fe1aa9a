// Channels and their members: created by import, administered by operators through the CLI
// (docs/design.md §Message visibility, §Operator CLI). No public endpoint changes them. Nothing
// about visibility is cached, so a change here applies to the very next API request.
import type { Executor } from '../db/types.ts';
import { isoNow, newId } from '../lib/ids.ts';
import type { Visibility } from './tables.ts';
import { InputError } from '../lib/errors.ts';
import { requireWorkspace } from '../workspaces/service.ts';

export const VISIBILITIES: readonly Visibility[] = ['public', 'restricted', 'private'];

export function checkVisibility(v: unknown): Visibility {
  if (typeof v !== 'string' || !(VISIBILITIES as readonly string[]).includes(v)) {
    throw new InputError(`visibility must be one of ${VISIBILITIES.join(', ')}`, 'visibility');
  }
  return v as Visibility;
}

export function checkLabel(what: string, v: unknown): string {
  const s = typeof v === 'string' ? v.trim() : '';
  if (s.length < 1 || s.length > 255) throw new InputError(`${what} must be a string of 1 to 255 characters`, what);
  return s;
}

export interface NewChannel {
  workspaceId: string;
  provider: string;
  name: string;
  visibility: string;
  externalId?: string | null;
}

export async function createChannel(db: Executor, input: NewChannel, now = Date.now()) {
  await requireWorkspace(db, input.workspaceId);
  const row = {
    id: newId('chn', now),
    workspace_id: input.workspaceId,
    external_id: input.externalId ?? null,
    provider: checkLabel('provider', input.provider),
    name: checkLabel('name', input.name),
    visibility: checkVisibility(input.visibility),
    message_count: 0,
    created_at: isoNow(now),
    updated_at: isoNow(now),
  };
  await db.insertInto('channels').values(row).execute();
  return describeChannel(row, 0);
}

/** A channel of the workspace by id or externalId. */
export async function findChannel(db: Executor, workspaceId: string, ref: string) {
  const row = await db
    .selectFrom('channels')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', ref), eb('external_id', '=', ref)]))
    .executeTakeFirst();
  if (!row) throw new InputError(`no channel "${ref}" in workspace ${workspaceId}`, 'channel');
  return row;
}

/** A user of the workspace by id, externalId or email. */
async function findUserRef(db: Executor, workspaceId: string, ref: string): Promise<string> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', ref), eb('external_id', '=', ref), eb('email', '=', ref.trim().toLowerCase())]))
    .executeTakeFirst();
  if (!row) throw new InputError(`no user "${ref}" in workspace ${workspaceId}`, 'user');
  return row.id;
}

export async function setVisibility(db: Executor, workspaceId: string, ref: string, visibility: string, now = Date.now()) {
  const channel = await findChannel(db, workspaceId, ref);
  const v = checkVisibility(visibility);
  await applyVisibility(db, channel.id, v, isoNow(now));
  return describeChannel({ ...channel, visibility: v }, await memberCount(db, channel.id));
}

/** Adds and removes members; adding a member twice or removing a non-member is a no-op. */
export async function changeMembers(db: Executor, workspaceId: string, ref: string, change: { add?: string[]; remove?: string[] }, now = Date.now()) {
  const channel = await findChannel(db, workspaceId, ref);
  const add = [...new Set(await Promise.all((change.add ?? []).map((u) => findUserRef(db, workspaceId, u))))];
  const remove = [...new Set(await Promise.all((change.remove ?? []).map((u) => findUserRef(db, workspaceId, u))))];
  await replaceMembers(db, channel.id, add, remove, isoNow(now));
  return describeChannel(channel, await memberCount(db, channel.id));
}

/** Sets a channel's visibility and its messages' copy of it; call inside one transaction. */
export async function applyVisibility(db: Executor, channelId: string, v: Visibility, at: string): Promise<void> {
  await db.updateTable('channels').set({ visibility: v, updated_at: at }).where('id', '=', channelId).execute();
  await db.updateTable('messages').set({ channel_visibility: v }).where('channel_id', '=', channelId).where('channel_visibility', '<>', v).execute();
}

export async function replaceMembers(db: Executor, channelId: string, add: string[], remove: string[], at: string): Promise<void> {
  if (remove.length > 0) await db.deleteFrom('channel_members').where('channel_id', '=', channelId).where('user_id', 'in', remove).execute();
  if (add.length === 0) return;
  const present = await db.selectFrom('channel_members').select('user_id').where('channel_id', '=', channelId).where('user_id', 'in', add).execute();
  const have = new Set(present.map((r) => r.user_id));
  const rows = add.filter((u) => !have.has(u)).map((user_id) => ({ channel_id: channelId, user_id, created_at: at }));
  if (rows.length > 0) await db.insertInto('channel_members').values(rows).execute();
}

async function memberCount(db: Executor, channelId: string): Promise<number> {
  const r = await db.selectFrom('channel_members').select((eb) => eb.fn.countAll<number>().as('n')).where('channel_id', '=', channelId).executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function listChannels(db: Executor, workspaceId: string) {
  await requireWorkspace(db, workspaceId);
  const rows = await db
    .selectFrom('channels as c')
    .selectAll('c')
    .select((eb) => eb.selectFrom('channel_members as cm').whereRef('cm.channel_id', '=', 'c.id').select((e) => e.fn.countAll<number>().as('n')).as('members'))
    .where('c.workspace_id', '=', workspaceId)
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id', 'desc')
    .execute();
  return rows.map((r) => describeChannel(r, Number(r.members ?? 0)));
}

/** Recomputes the kept message counts of these channels (after an import moved messages). */
export async function recountChannels(db: Executor, channelIds: string[]): Promise<void> {
  for (const id of new Set(channelIds)) {
    const r = await db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n')).where('channel_id', '=', id).executeTakeFirst();
    await db.updateTable('channels').set({ message_count: Number(r?.n ?? 0) }).where('id', '=', id).execute();
  }
}

export function describeChannel(
  r: { id: string; external_id: string | null; provider: string; name: string; visibility: Visibility; message_count: number; created_at: string },
  members: number,
) {
  return { id: r.id, externalId: r.external_id, provider: r.provider, name: r.name, visibility: r.visibility, members, messages: Number(r.message_count), createdAt: r.created_at };
}
