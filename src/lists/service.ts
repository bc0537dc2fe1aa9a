// Rules of lists (decisions §7): names, object types, members and their checks. No HTTP here.
import type { Config } from '../config.ts';
import type { Executor } from '../db/database.ts';
import { AppError, notFound } from '../http/errors.ts';
import { envelope, type Page } from '../http/pagination.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { httpLink } from '../lib/links.ts';
import { RECORD_DEFS } from '../records/definitions.ts';
import { existingRecordIds, loadEntities } from '../records/repository.ts';
import type { RecordKind } from '../records/tables.ts';
import * as repo from './repository.ts';

type Ids = string | string[];

export interface CreateListInput {
  fields: { $name: string; $objectType: string };
  relationships?: Record<string, Ids>;
}

export interface UpdateListInput {
  fields?: { $name?: string };
  relationships?: Record<string, { add?: Ids; remove?: Ids }>;
}

const OBJECT_TYPES: Record<string, RecordKind> = {
  account: 'account',
  contact: 'contact',
  opportunity: 'opportunity',
  $account: 'account',
  $contact: 'contact',
  $opportunity: 'opportunity',
};

export function toApi(config: Config, row: repo.ListRow) {
  return {
    id: row.id,
    createdAt: row.created_at,
    fields: { $name: { value: row.name, valueType: 'TEXT' as const }, $objectType: { value: row.object_type, valueType: 'TEXT' as const } },
    httpLink: httpLink(config, 'lists', row.id),
  };
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > 255) throw new AppError('invalid_value', '$name must be 1 to 255 characters (after trimming spaces).', { param: 'fields.$name' });
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
function relationshipKey(kind: RecordKind, relationships: Record<string, unknown> | undefined): string {
  const key = `$${RECORD_DEFS[kind].plural}`;
  for (const k of Object.keys(relationships ?? {})) {
    if (k !== key) throw new AppError('unknown_relationship', `A list of ${kind} records takes members only under "${key}", not "${k}".`, { param: `relationships.${k}` });
  }
  return key;
}

async function requireEntities(db: Executor, workspaceId: string, kind: RecordKind, wanted: Map<string, string>): Promise<void> {
  if (wanted.size === 0) return;
  const found = await existingRecordIds(db, workspaceId, kind, [...wanted.keys()]);
  for (const [id, param] of wanted) {
    if (!found.has(id)) throw new AppError('relationship_entity_missing', `No ${kind} with id "${id}" exists; nothing was changed.`, { param });
  }
}

export async function createList(tx: Executor, config: Config, workspaceId: string, input: CreateListInput, now: number) {
  const name = checkName(input.fields.$name);
  // Own keys only: "__proto__" or "constructor" would otherwise find Object's own members.
  const kind = Object.hasOwn(OBJECT_TYPES, input.fields.$objectType) ? OBJECT_TYPES[input.fields.$objectType] : undefined;
  if (!kind) throw new AppError('invalid_value', '$objectType must be account, contact or opportunity.', { param: 'fields.$objectType' });
  const key = relationshipKey(kind, input.relationships);
  const initial = members(input.relationships?.[key], `relationships.${key}`);
  await requireEntities(tx, workspaceId, kind, initial);
  const at = isoNow(now);
  const row: repo.ListRow = { id: newId('lst', now), workspace_id: workspaceId, name, object_type: kind, member_count: 0, created_at: at, updated_at: at };
  await repo.insertList(tx, row);
  if (initial.size > 0) {
    row.member_count = await repo.addMembers(tx, row.id, [...initial.keys()], at);
    await repo.updateList(tx, row.id, { delta: row.member_count, at });
  }
  return toApi(config, row);
}

export async function updateList(tx: Executor, config: Config, workspaceId: string, id: string, input: UpdateListInput, now: number) {
  const row = await repo.findList(tx, workspaceId, id);
  if (!row) throw notFound('list', id);
  const name = input.fields?.$name === undefined ? undefined : checkName(input.fields.$name);
  const key = relationshipKey(row.object_type, input.relationships);
  const change = input.relationships?.[key];
  const add = members(change?.add, `relationships.${key}.add`);
  const remove = members(change?.remove, `relationships.${key}.remove`);
  for (const [memberId, param] of remove) {
    if (add.has(memberId)) throw new AppError('conflicting_membership_change', `"${memberId}" is both added and removed in one request.`, { param });
  }
  await requireEntities(tx, workspaceId, row.object_type, new Map([...add, ...remove]));
  const at = isoNow(now);
  const delta = (await repo.addMembers(tx, row.id, [...add.keys()], at)) - (await repo.removeMembers(tx, row.id, [...remove.keys()]));
  if (name !== undefined || delta !== 0) {
    await repo.updateList(tx, row.id, { ...(name !== undefined ? { name } : {}), delta, at });
    row.name = name ?? row.name;
  }
  return toApi(config, row);
}

export async function getList(db: Executor, config: Config, workspaceId: string, id: string) {
  const row = await repo.findList(db, workspaceId, id);
  if (!row) throw notFound('list', id);
  return toApi(config, row);
}

export async function listLists(db: Executor, config: Config, workspaceId: string, page: Page) {
  const { total, rows } = await repo.pageLists(db, workspaceId, page);
  return envelope(rows.map((r) => toApi(config, r)), total);
}

/** Members of the list of the kind in the path; a list of another kind has none of those. */
export async function listMembers(db: Executor, config: Config, workspaceId: string, listId: string, kind: RecordKind, page: Page) {
  const row = await repo.findList(db, workspaceId, listId);
  if (!row) throw notFound('list', listId);
  if (row.object_type !== kind) return envelope([], 0);
  const { total, ids } = await repo.pageMemberIds(db, row.id, page);
  return envelope(await loadEntities(db, config, workspaceId, kind, ids), total);
}
