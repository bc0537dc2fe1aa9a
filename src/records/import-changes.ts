// The change log of the record kinds of `rolodex import` (docs/history.md, docs/events.md): for
// each batch, in the transaction that writes its rows and after them, the starting snapshot and
// `<type>.created` of every new record, and the changed fields and `<type>.updated` of every record
// whose fields the import changed (the event naming those the API shows), in a few multi-row
// statements per batch. An item that changes
// nothing is not written at all (see writeBatches), so it logs nothing.
import { appendEventsJson, type Changes, type EventJsonInput, recordCreatedMany, recordFieldChangesMany } from '../changes/service.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import type { ImportContext } from '../import/kind.ts';
import { relationshipValues } from './resource.ts';
import { resourceJson } from './resource-json.ts';
import type { RecordRow } from './repository.ts';
import { canonical } from './service.ts';

export interface Updated {
  /** The row as written. */
  row: RecordRow;
  /** Its stored values (what `row.fields` serialises). */
  stored: Record<string, unknown>;
  changes: Changes;
  /** The new value of each changed field (null: cleared), for the field history. */
  values: Map<string, unknown>;
}

/**
 * What an import's values change of a record's stored ones: an import replaces every field, so a
 * key held by either side and not equal (as the API compares values) changed. Undefined: nothing.
 */
export function fieldChanges(before: Record<string, unknown>, after: Record<string, unknown>): Omit<Updated, 'row' | 'stored'> | undefined {
  const changes: Changes = {};
  const values = new Map<string, unknown>();
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const from = Object.hasOwn(before, key) ? before[key] : null;
    const to = Object.hasOwn(after, key) ? after[key] : null;
    if (canonical(from) === canonical(to)) continue;
    changes[key] = { from, to };
    values.set(key, to);
  }
  return values.size === 0 ? undefined : { changes, values };
}

/**
 * Logs one batch. The events' `data.object` is the record as the API shows it at this point: its
 * relationships are those it holds before the import's link step (none for a new record). Each
 * object is serialised once, from the values the batch stored (resourceJson), and a new record's
 * snapshot is its row's stored JSON.
 */
export async function logBatch(
  ctx: ImportContext,
  defs: TypeDefinitions,
  created: ReadonlyArray<{ row: RecordRow; stored: Record<string, unknown> }>,
  updated: readonly Updated[],
): Promise<void> {
  if (created.length === 0 && updated.length === 0) return;
  const type = defs.objectType;
  const createdIds = created.map((c) => c.row.id);
  const updatedIds = updated.map((u) => u.row.id);
  // A new record's own and inverse relationships are empty until the link step: not read.
  const [newRels, oldRels] = await Promise.all([
    relationshipValues(ctx, defs, createdIds, { own: new Map(), inverse: new Map() }),
    relationshipValues(ctx, defs, updatedIds),
  ]);
  const events: EventJsonInput[] = [];
  const createdType = `${type}.created` as const;
  const updatedType = `${type}.updated` as const;
  for (const { row, stored } of created) events.push({ type: createdType, objectId: row.id, json: resourceJson(ctx, defs, row, stored, newRels.get(row.id)) });
  for (const u of updated) {
    // The event names the fields the API shows (docs/events.md §Shape), as a merge's does: an
    // archived field's change is in its history only, and a record whose other fields are as
    // they were has no change to name, so no event.
    const changes = Object.fromEntries(Object.entries(u.changes).filter(([key]) => !defs.archived.has(key)));
    if (Object.keys(changes).length === 0) continue;
    events.push({
      type: updatedType,
      objectId: u.row.id,
      json: resourceJson(ctx, defs, u.row, u.stored, oldRels.get(u.row.id)),
      changes,
      at: u.row.updated_at,
    });
  }
  await recordCreatedMany(
    ctx,
    created.map((c) => ({ recordId: c.row.id, json: c.row.fields })),
  );
  await recordFieldChangesMany(
    ctx,
    updated.map((u) => ({ recordId: u.row.id, changes: u.values, at: u.row.updated_at })),
  );
  await appendEventsJson(ctx, events, (kind) => ctx.newId(kind));
}
