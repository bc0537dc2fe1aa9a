// Merging two records of one type (docs/merge.md): the primary keeps its id and takes the
// resolved fields and every link of the duplicate, which goes to the trash marked as merged, all
// in the caller's one transaction. The merge is recorded (`mrg_…`) with status `done`.
import { appendEvent, type Changes, recordFieldChanges } from '../changes/service.ts';
import { holdDefinitions } from '../definitions/repository.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { AppError } from '../lib/errors.ts';
import { laterIso } from '../lib/dates.ts';
import { isoNow, newId } from '../lib/ids.ts';
import * as lists from '../lists/repository.ts';
import { membershipMoves } from '../lists/service.ts';
import { loadRecords } from '../records/resource.ts';
import { type RecordResource, type RecordType, getRecord, requireDefinitions } from '../records/service.ts';
import * as records from '../records/repository.ts';
import { canonical } from '../records/service.ts';
import { indexedScalar, valueRows } from '../records/index/values.ts';
import { valueTaken, writeValueIndex } from '../records/index/repository.ts';
import { takeRecord } from '../trash/service.ts';
import { checkResolutions, mergeFields, type Resolution } from './fields.ts';
import { moveLinks } from './links.ts';
import * as repo from './repository.ts';

export interface MergeInput {
  primaryId: string;
  duplicateId: string;
  fieldResolutions?: Record<string, Resolution>;
  options?: { multiSelectUnion?: boolean };
}

export interface MergeResult {
  merge: { id: string; status: repo.MergeRow['status'] };
  primary: RecordResource;
  summary: { fieldWriteCount: number; syncRepointedCount: number; warnings: string[] };
}

function live(ctx: Ctx, rows: ReadonlyMap<string, records.RecordRow>, type: RecordType, id: string, param: string): records.RecordRow {
  const row = rows.get(id);
  if (row?.workspace_id !== ctx.actor.workspaceId || row.kind !== type.objectType)
    throw new AppError('relationship_entity_missing', `No live ${type.objectType} with id "${id}" exists; nothing was merged.`, { param });
  return row;
}

export async function mergeRecords(ctx: WriteCtx, type: RecordType, input: MergeInput): Promise<MergeResult> {
  const ws = ctx.actor.workspaceId;
  if (input.primaryId === input.duplicateId) throw new AppError('invalid_value', 'primaryId and duplicateId name the same record.', { param: 'duplicateId' });
  // The definitions are held (shared) first: the primary may take values of an archived field it
  // did not hold, which an `unarchive` under way does not find to index, so one under way commits
  // before they are read, and a later one waits for the merge and then finds the primary among the
  // records holding the field (docs/merge.md §Fields). Before the records, since an unarchive
  // locks those holding the field while it holds the definitions.
  await holdDefinitions(ctx.db, ws);
  // The type's listing is locked next: merges and deletes of the type take turns.
  await records.lockRecords(ctx.db, ws, type.objectType);
  // Both records in one read, locked: an update of either that commits meanwhile is waited for and
  // then read, so the merged fields never write back over it (docs/records.md §Concurrent writes).
  const rows = await records.recordRows(ctx.db, [input.primaryId, input.duplicateId], { lock: true });
  const primary = live(ctx, rows, type, input.primaryId, 'primaryId');
  const duplicate = live(ctx, rows, type, input.duplicateId, 'duplicateId');
  const defs = await requireDefinitions(ctx, type.objectType);
  const resolutions = input.fieldResolutions ?? {};
  const before = JSON.parse(primary.fields) as Record<string, unknown>;
  const checked = checkResolutions(defs, resolutions, before, JSON.parse(duplicate.fields) as Record<string, unknown>);
  if (type.objectType === 'opportunity') {
    const [a, b] = await Promise.all([repo.ownRows(ctx.db, primary.id), repo.ownRows(ctx.db, duplicate.id)]);
    const account = (rows: repo.Row[]) => rows.filter((r) => r.name === '$account').map((r) => r.target_id);
    if (account(a).join() !== account(b).join())
      throw new AppError('invalid_value', 'Opportunities merge only when they belong to the same $account.', { param: 'duplicateId' });
  }

  // Both as they stand before the merge, in one read: the duplicate as the trash keeps it, the
  // primary's relationships for the event's changes.
  const both = await loadRecords(ctx, { kind: type.objectType, ids: [primary.id, duplicate.id] });
  const primaryBefore = both.find((r) => r.id === primary.id) as RecordResource;
  const duplicateBefore = both.find((r) => r.id === duplicate.id) as RecordResource;
  const warnings: string[] = [];
  const links = await moveLinks(ctx, defs, primary.id, duplicate.id, warnings);
  let repointed = links.count;
  // Only the memberships still there once their lists are locked move: a list deleted meanwhile
  // holds the duplicate's in its entry (docs/merge.md §Links).
  const { left, joined } = await lists.moveMemberships(ctx.db, duplicate.id, primary.id);
  repointed += joined.length;
  // The duplicate leaves before the primary takes its values: its unique values are free then.
  await takeRecord(ctx, duplicate, duplicateBefore, { into: primary.id, defs });

  const after = mergeFields(
    defs,
    before,
    JSON.parse(duplicate.fields) as Record<string, unknown>,
    resolutions,
    checked,
    input.options?.multiSelectUnion === true,
  );
  const differs = (k: string) => canonical(before[k] ?? null) !== canonical(after[k] ?? null);
  const changed = [...defs.fields.keys()].filter(differs);
  // An archived field's value taken from the duplicate is stored and recorded in its history, which
  // unarchive shows again, but neither counted nor named in the event, which show the API's fields.
  const archivedTaken = [...defs.archived.keys()].filter(differs);
  for (const key of changed) {
    const def = defs.fields.get(key);
    if (!def?.unique || after[key] === undefined) continue;
    const v = after[key];
    for (const x of Array.isArray(v) ? v : [v]) {
      const indexed = indexedScalar(def.valueType, x);
      if (indexed !== undefined && (await valueTaken(ctx.db, ws, type.objectType, key, indexed, primary.id)))
        throw new AppError('duplicate_value', `Another ${type.objectType} already holds the merged value of "${key}".`, { param: `fieldResolutions.${key}` });
    }
  }
  // A primary without an externalId takes the duplicate's, so that an import naming it updates the
  // primary instead of creating the duplicate again (docs/merge.md §externalId). The duplicate has
  // left the live table, and the unique index held it there, so no live record of the type holds it.
  const takenId = primary.external_id === null ? duplicate.external_id : null;
  const externalId = takenId === null ? {} : { external_id: takenId };
  const now = isoNow(ctx.now);
  // The primary's updatedAt never moves backwards (docs/records.md §Times of writes); its row is locked.
  const at = laterIso(now, primary.updated_at);
  if (changed.length > 0 || archivedTaken.length > 0) {
    await writeValueIndex(ctx.db, defs, [primary.id], valueRows(ws, defs, primary.id, after));
    await records.updateRecord(ctx.db, primary.id, { fields: JSON.stringify(after), ...externalId, updated_at: at });
  } else if (repointed > 0 || takenId !== null) await records.updateRecord(ctx.db, primary.id, { ...externalId, updated_at: at });
  // A record whose link now names the primary has changed as the API shows it, as the other end of
  // a link written through the API has (docs/records.md §Writing relationships).
  if (links.others.length > 0) await records.touchRecords(ctx.db, links.others, now);

  const row: repo.MergeRow = {
    id: newId('mrg', ctx.now),
    workspace_id: ws,
    entity_type: type.objectType,
    primary_id: primary.id,
    duplicate_id: duplicate.id,
    status: 'done',
    created_at: now,
    updated_at: now,
  };
  await repo.insertMerge(ctx.db, row);
  const merged = await getRecord(ctx, { type, id: primary.id });
  // The history and the event carry the primary's new updatedAt (docs/events.md §Shape).
  const stamped: WriteCtx = { ...ctx, now: Date.parse(at) };
  const recorded = [...changed, ...archivedTaken];
  if (recorded.length > 0) await recordFieldChanges(stamped, { recordId: primary.id, changes: new Map(recorded.map((k) => [k, after[k] ?? null])) });
  await appendEvent(stamped, {
    type: `${type.objectType}.merged`,
    object: merged,
    changes: {
      ...Object.fromEntries(changed.map((k) => [k, { from: before[k] ?? null, to: after[k] ?? null }])),
      ...relationshipChanges(defs, primaryBefore, merged),
      ...(takenId === null ? {} : { externalId: { from: null, to: takenId } }),
    },
    duplicateId: duplicate.id,
  });
  await membershipMoves(ctx, [
    { type: 'list.members_removed', listIds: left.map((m) => m.list_id), memberId: duplicate.id },
    { type: 'list.members_added', listIds: joined.map((m) => m.list_id), memberId: primary.id },
  ]);
  return {
    merge: { id: row.id, status: row.status },
    primary: merged,
    summary: { fieldWriteCount: changed.length, syncRepointedCount: repointed, warnings },
  };
}

/**
 * The primary's relationships the merge changed, as the API shows them before and after (arrays of
 * ids): the links it took from the duplicate (docs/events.md §Shape). A derived one (`$meeting`) is
 * computed when read, never written, and an update's event never names it: nor does a merge's.
 */
function relationshipChanges(defs: TypeDefinitions, before: RecordResource, after: RecordResource): Changes {
  const changes: Changes = {};
  const sorted = (ids: readonly string[]) => [...ids].sort().join();
  for (const [key, rel] of Object.entries(after.relationships)) {
    if (defs.relationships.get(key)?.storage.kind === 'derived') continue;
    const from = before.relationships[key]?.values ?? [];
    if (sorted(from) !== sorted(rel.values)) changes[key] = { from, to: rel.values };
  }
  return changes;
}

export function toResource(row: repo.MergeRow) {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    entityType: row.entity_type,
    primaryId: row.primary_id,
    duplicateId: row.duplicate_id,
    status: row.status,
  };
}

/** The merge `id` of ctx's workspace, if it is of a type of `only` (null: any type); else null. */
export async function getMerge(ctx: Ctx, input: { id: string; only: repo.MergeTypes | null }) {
  const row = await repo.findMerge(ctx.db, ctx.actor.workspaceId, input.id, input.only);
  return row ? toResource(row) : null;
}
