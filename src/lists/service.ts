// Rules of lists (docs/design.md §Lists): names, object types, members and their checks. No HTTP
// here.
import type { Static } from '@sinclair/typebox';
import { appendEvent, appendEvents } from '../changes/service.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { agreeingPage, envelope, type Page } from '../lib/paging.ts';
import { RECORD_TYPES, loadRecords } from '../records/service.ts';
import { existingRecords } from '../records/repository.ts';
import type { RecordKind } from '../records/tables.ts';
import { trashedAmong } from '../trash/repository.ts';
import * as repo from './repository.ts';
import type { CreateListBody, IdParams, ListIdParams, UpdateListBody } from './schemas.ts';
import { blank, longerThan } from '../lib/chars.ts';

// Inputs are the routes' schemas: what validation let through is what the service gets.
export type CreateListInput = Static<typeof CreateListBody>;
export type UpdateListInput = Static<typeof IdParams> & Static<typeof UpdateListBody>;
export type ListMembersInput = Static<typeof ListIdParams> & Page & { kind: RecordKind };

type Ids = string | string[];

const OBJECT_TYPES: Record<string, RecordKind> = {
  account: 'account',
  contact: 'contact',
  opportunity: 'opportunity',
  $account: 'account',
  $contact: 'contact',
  $opportunity: 'opportunity',
};

export function toResource(ctx: Ctx, row: repo.ListRow) {
  return {
    id: row.id,
    createdAt: row.created_at,
    fields: { $name: { value: row.name, valueType: 'TEXT' as const }, $objectType: { value: row.object_type, valueType: 'TEXT' as const } },
    httpLink: ctx.links.http('lists', row.id),
  };
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (blank(name) || longerThan(name, 255))
    throw new AppError('invalid_value', '$name must be 1 to 255 characters (after trimming spaces), not white space or invisible characters alone.', {
      param: 'fields.$name',
    });
  return name;
}

/** The ids with the param path of each (duplicates collapsed onto their first place). */
function members(value: Ids | undefined, param: string): Map<string, string> {
  const out = new Map<string, string>();
  if (value === undefined) return out;
  if (typeof value === 'string') return out.set(value, param);
  value.forEach((id, i) => {
    if (!out.has(id)) out.set(id, `${param}[${i}]`);
  });
  return out;
}

/** The one relationship key a list of this type accepts; any other key is refused. */
function relationshipKey(kind: RecordKind, relationships: object | undefined): string {
  const key = `$${RECORD_TYPES[kind].plural}`;
  for (const k of Object.keys(relationships ?? {})) {
    if (k !== key)
      throw new AppError('unknown_relationship', `A list of ${kind} records takes members only under "${key}", not "${k}".`, { param: `relationships.${k}` });
  }
  return key;
}

async function requireEntities(ctx: Ctx, kind: RecordKind, wanted: Map<string, string>): Promise<void> {
  if (wanted.size === 0) return;
  const found = await existingRecords(ctx.db, ctx.actor.workspaceId, kind, [...wanted.keys()]);
  const missing = [...wanted.keys()].filter((id) => !found.has(id));
  const trashed = missing.length === 0 ? new Set<string>() : await trashedAmong(ctx.db, ctx.actor.workspaceId, missing, kind);
  for (const [id, param] of wanted) {
    if (trashed.has(id)) throw new AppError('relationship_entity_inactive', `The ${kind} "${id}" is in the trash; nothing was changed.`, { param });
    if (!found.has(id)) throw new AppError('relationship_entity_missing', `No ${kind} with id "${id}" exists; nothing was changed.`, { param });
  }
}

/** Members under their relationship key; the schemas allow extra keys, which relationshipKey refuses. */
function under<T>(relationships: object | undefined, key: string): T | undefined {
  return relationships && Object.hasOwn(relationships, key) ? (relationships as Record<string, T>)[key] : undefined;
}

export async function createList(ctx: WriteCtx, input: CreateListInput) {
  const name = checkName(input.fields.$name);
  // Own keys only: "__proto__" or "constructor" would otherwise find Object's own members.
  const kind = Object.hasOwn(OBJECT_TYPES, input.fields.$objectType) ? OBJECT_TYPES[input.fields.$objectType] : undefined;
  if (!kind) throw new AppError('invalid_value', '$objectType must be account, contact or opportunity.', { param: 'fields.$objectType' });
  const key = relationshipKey(kind, input.relationships);
  const initial = members(under<Ids>(input.relationships, key), `relationships.${key}`);
  await requireEntities(ctx, kind, initial);
  const at = isoNow(ctx.now);
  const row: repo.ListRow = {
    id: newId('lst', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    external_id: null,
    name,
    object_type: kind,
    member_count: 0,
    created_at: at,
    updated_at: at,
  };
  await repo.insertList(ctx.db, row);
  const added = await repo.addMembers(ctx.db, row.id, [...initial.keys()], at);
  if (added.length > 0) {
    row.member_count = added.length;
    await repo.updateList(ctx.db, row.id, { delta: row.member_count, at });
  }
  const list = toResource(ctx, row);
  await appendEvent(ctx, { type: 'list.created', object: list });
  if (added.length > 0) await appendEvent(ctx, { type: 'list.members_added', object: list, members: added });
  return list;
}

export async function updateList(ctx: WriteCtx, input: UpdateListInput) {
  const row = await repo.findListToChange(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) throw notFound('list', input.id);
  const name = input.fields?.$name === undefined ? undefined : checkName(input.fields.$name);
  const key = relationshipKey(row.object_type, input.relationships);
  const change = under<{ add?: Ids; remove?: Ids }>(input.relationships, key);
  // An operation naming neither add nor remove is a mistake, not a no-op: refused as a record's
  // empty relationship operation is (docs/errors.md §Lists).
  if (change && change.add === undefined && change.remove === undefined)
    throw new AppError('parameter_missing', `"relationships.${key}" needs add or remove.`, { param: `relationships.${key}` });
  const add = members(change?.add, `relationships.${key}.add`);
  const remove = members(change?.remove, `relationships.${key}.remove`);
  for (const [memberId, param] of remove) {
    if (add.has(memberId)) throw new AppError('conflicting_membership_change', `"${memberId}" is both added and removed in one request.`, { param });
  }
  await requireEntities(ctx, row.object_type, new Map([...add, ...remove]));
  const at = isoNow(ctx.now);
  const added = await repo.addMembers(ctx.db, row.id, [...add.keys()], at);
  const removed = await repo.removeMembers(ctx.db, row.id, [...remove.keys()]);
  const delta = added.length - removed.length;
  const before = row.name;
  if (name !== undefined || delta !== 0) {
    await repo.updateList(ctx.db, row.id, { ...(name !== undefined ? { name } : {}), delta, at });
    row.name = name ?? row.name;
  }
  const list = toResource(ctx, row);
  if (row.name !== before) await appendEvent(ctx, { type: 'list.updated', object: list, changes: { $name: { from: before, to: row.name } } });
  if (added.length > 0) await appendEvent(ctx, { type: 'list.members_added', object: list, members: added });
  if (removed.length > 0) await appendEvent(ctx, { type: 'list.members_removed', object: list, members: removed });
  return list;
}

/**
 * The events of memberships that a delete, a restore or a merge of `memberId` moved, one per list
 * it joined or left (docs/events.md §Types): a list's membership is followed by its events alone.
 * Lists that are not live (held in the trash) have none.
 */
export async function membershipsMoved(ctx: WriteCtx, type: MembershipMove['type'], listIds: readonly string[], memberId: string) {
  await membershipMoves(ctx, [{ type, listIds, memberId }]);
}

export interface MembershipMove {
  type: 'list.members_added' | 'list.members_removed';
  listIds: readonly string[];
  memberId: string;
}

/** Several moves' events (a merge's removals and additions), in order: their lists read once, the events appended together. */
export async function membershipMoves(ctx: WriteCtx, moves: readonly MembershipMove[]) {
  const ids = moves.flatMap((m) => m.listIds);
  if (ids.length === 0) return;
  const rows = await repo.findLists(ctx.db, ctx.actor.workspaceId, ids);
  await appendEvents(
    ctx,
    moves.flatMap((m) =>
      m.listIds.flatMap((id) => {
        const row = rows.get(id);
        return row ? [{ type: m.type, object: toResource(ctx, row), members: [m.memberId] }] : [];
      }),
    ),
  );
}

export async function getList(ctx: Ctx, input: { id: string }) {
  const row = await repo.findList(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) throw notFound('list', input.id);
  return toResource(ctx, row);
}

export async function listLists(ctx: Ctx, input: Page) {
  const { total, rows } = await repo.pageLists(ctx.db, ctx.actor.workspaceId, input);
  return envelope(
    rows.map((r) => toResource(ctx, r)),
    total,
  );
}

/** Members of the list of the kind in the path; a list of another kind has none of those. */
export async function listMembers(ctx: Ctx, input: ListMembersInput) {
  // The page is read alongside the list, by the id in the path: one step instead of two on
  // PostgreSQL (docs/pages.md §Round trips of a page); a page of a list not found is never shown.
  return agreeingPage(input, async () => {
    const [row, { total, ids }] = await Promise.all([
      repo.findListAlongside(ctx.db, ctx.actor.workspaceId, input.listId),
      repo.pageMemberIds(ctx.db, input.listId, input),
    ]);
    if (!row) throw notFound('list', input.listId, 'listId');
    if (row.object_type !== input.kind) return { data: [], totalCount: 0 };
    // Two snapshots: a page without members may have been read once a delete of the list had
    // taken them, the list having been read live before. Read again, a list gone is 404, never
    // an empty list (docs/pages.md §Round trips of a page).
    if (total === 0 && !(await repo.findList(ctx.db, ctx.actor.workspaceId, input.listId))) throw notFound('list', input.listId, 'listId');
    return { data: await loadRecords(ctx, { kind: input.kind, ids }), totalCount: total };
  });
}
