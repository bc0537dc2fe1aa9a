// Channels and their members: created by import, administered by operators through the CLI
// (docs/design.md §Message visibility, §Operator CLI), read through the API (docs/messages.md
// §Channels). No public endpoint changes them. Nothing about visibility is cached, so a change here
// applies to the very next API request.
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { InputError, notFound } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { envelope, type Page } from '../lib/paging.ts';
import { checkExternalId } from '../import/kind.ts';
import { findUserRef } from '../users/service.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import * as repo from './repository.ts';
import type { Visibility } from './tables.ts';
import { longerThan } from '../lib/chars.ts';

export const VISIBILITIES: readonly Visibility[] = ['public', 'restricted', 'private'];

export function checkVisibility(v: unknown): Visibility {
  if (typeof v !== 'string' || !(VISIBILITIES as readonly string[]).includes(v)) {
    throw new InputError(`visibility must be one of ${VISIBILITIES.join(', ')}`, 'visibility');
  }
  return v as Visibility;
}

/** A provider or a name: 1 to 255 characters after trimming; the InputError names `what`. */
export function checkLabel(what: string, v: unknown): string {
  const s = typeof v === 'string' ? v.trim() : '';
  if (s.length < 1 || longerThan(s, 255)) throw new InputError(`${what} must be a string of 1 to 255 characters`, what);
  return s;
}

export function toResource(r: repo.ChannelRow, members: number) {
  return {
    id: r.id,
    externalId: r.external_id,
    provider: r.provider,
    name: r.name,
    visibility: r.visibility,
    members,
    messages: Number(r.message_count),
    createdAt: r.created_at,
  };
}

export interface ChannelInput {
  provider: string;
  name: string;
  visibility: string;
  externalId?: string | null;
}

export async function createChannel(ctx: Ctx, input: ChannelInput) {
  await requireWorkspace(ctx);
  const at = isoNow(ctx.now);
  const row: repo.ChannelRow = {
    id: newId('chn', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    external_id: input.externalId == null ? null : checkExternalId(input.externalId, '--external-id', { named: true }),
    provider: checkLabel('provider', input.provider),
    name: checkLabel('name', input.name),
    visibility: checkVisibility(input.visibility),
    message_count: 0,
    created_at: at,
    updated_at: at,
  };
  if (!(await repo.insertChannel(ctx.db, row)))
    throw new InputError(`a channel of this workspace has the externalId "${row.external_id}" already`, '--external-id');
  return toResource(row, 0);
}

/**
 * A channel of the workspace by id or externalId. A workspace that does not exist is said so, as
 * every command says it (docs/cli.md), rather than blamed on the channel.
 */
async function findChannel(ctx: Ctx, ref: string): Promise<repo.ChannelRow> {
  const row = await repo.findChannelByRef(ctx.db, ctx.actor.workspaceId, ref);
  if (row) return row;
  await requireWorkspace(ctx);
  throw new InputError(`no channel "${ref}" in workspace ${ctx.actor.workspaceId}`, 'channel');
}

/** Call inside one transaction: the messages' copy of the visibility changes with it. */
export async function setVisibility(ctx: WriteCtx, input: { channel: string; visibility: string }) {
  const channel = await findChannel(ctx, input.channel);
  const v = checkVisibility(input.visibility);
  await repo.setVisibility(ctx.db, channel.id, v, isoNow(ctx.now));
  return toResource({ ...channel, visibility: v }, await repo.memberCount(ctx.db, channel.id));
}

/** Adds and removes members (users by id, externalId or email); either may be a no-op. */
export async function changeMembers(ctx: Ctx, input: { channel: string; add?: string[]; remove?: string[] }) {
  const channel = await findChannel(ctx, input.channel);
  const ids = async (refs: string[] | undefined) => [...new Set(await Promise.all((refs ?? []).map((ref) => findUserRef(ctx, { ref }))))];
  await repo.changeMembers(ctx.db, channel.id, await ids(input.add), await ids(input.remove), isoNow(ctx.now));
  return toResource(channel, await repo.memberCount(ctx.db, channel.id));
}

export async function listChannels(ctx: Ctx) {
  await requireWorkspace(ctx);
  return (await repo.listChannels(ctx.db, ctx.actor.workspaceId)).map((r) => toResource(r, Number(r.members ?? 0)));
}

/** The channel resource of the API (docs/messages.md §Channels). */
export function toApiResource(ctx: Pick<Ctx, 'links'>, r: repo.VisibleChannel) {
  return {
    id: r.id,
    createdAt: r.created_at,
    fields: {
      $name: { value: r.name, valueType: 'TEXT' as const },
      $provider: { value: r.provider, valueType: 'TEXT' as const },
      $visibility: { value: r.visibility, valueType: 'TEXT' as const },
    },
    httpLink: ctx.links.http('channels', r.id),
    objectType: 'channel' as const,
    relationships: { $members: { cardinality: 'has_many' as const, objectType: 'member' as const, values: r.memberIds } },
    updatedAt: r.updated_at,
    externalId: r.external_id,
  };
}

/** Newest first; totalCount is the number of channels the caller sees (visible exactly when their
 * messages can be: src/channels/visibility.ts). */
export async function listVisibleChannels(ctx: Ctx, input: Page) {
  const { total, rows } = await repo.pageVisibleChannels(ctx.db, ctx.actor, input);
  return envelope(
    rows.map((r) => toApiResource(ctx, r)),
    total,
  );
}

/** An invisible channel does not exist for the caller: 404, the answer of an unknown id. */
export async function getChannel(ctx: Ctx, input: { id: string }) {
  const row = await repo.findVisibleChannel(ctx.db, ctx.actor, input.id);
  if (!row) throw notFound('channel', input.id);
  return toApiResource(ctx, row);
}
