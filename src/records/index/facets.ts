// Ranked values (docs/filtering.md §Ranked values): a field whose definition lists the values it
// takes (a task's `$status`) has, per workspace, type and value, a ranked set of the records
// holding that value (docs/pages.md), so that a page of `field=value` at any offset reads what the
// first page reads and its totalCount is the partition's size. Its rows, `record_facets`, are
// written beside the value index by writeValueIndex, which every writer of records calls.
import { sql } from 'kysely';
import {
  chunks,
  deferred,
  deferredRows,
  defineRank,
  lockedForUpdate,
  lockOrder,
  lockPartition,
  rankDelete,
  rankExceptPage,
  rankInsert,
  rankLoadEnd,
  rankLoadKeys,
  rankPage,
  type Executor,
  type RankKey,
  type Tx,
} from '../../db/index.ts';
import type { TypeDefinitions } from '../../definitions/service.ts';
import type { Page } from '../../lib/paging.ts';
import { RECORDS } from '../repository.ts';
import type { RecordValuesTable } from '../tables.ts';
import type { RecordFacetsTable } from './tables.ts';

/** The records of a type in a workspace holding one value of one field; partition values: [workspaceId, type, field, value]. */
export const FACETS = defineRank({
  name: 'facets',
  table: 'record_facets',
  by: ['workspace_id', 'object_type', 'field', 'value_text'],
  ts: 'created_at',
  id: 'record_id',
  appends: true,
});

/** The fields of the type that are ranked per value: those whose definition lists their values. */
export function rankedFields(defs: TypeDefinitions): Set<string> {
  return new Set([...defs.fields.values()].filter((f) => f.values !== null).map((f) => f.key));
}

/** What a bulk load's facets need: its records' `created_at`, and the ranked sets its rows went to, by partition. */
export interface FacetLoad {
  readonly createdAt: string;
  readonly sets: Map<string, string[]>;
}

type Facet = Pick<RecordFacetsTable, 'workspace_id' | 'object_type' | 'field' | 'value_text' | 'record_id'>;
const partition = (r: Facet): string[] => [r.workspace_id, r.object_type, r.field, r.value_text];
const sameValue = (r: Facet) => `${r.record_id}\u0000${r.field}\u0000${r.value_text}`;

/**
 * Rewrites the facet rows of `recordIds` (and of the new records among `rows`) to what `rows`, the
 * records' value-index rows, hold, and moves the counts of their ranked sets. Only the rows that
 * change are written; the keys counted are those the statements report deleted or inserted, so the
 * counts follow the rows even when two writes of one record overlap. A bulk load (`load`) writes
 * its rows without reading them back and notes the sets they go to: its sets are counted once it
 * ends (rankFacetsAfterLoad), from the keys given here when its transaction takes its locks late
 * (`rankLoadKeys`), else from their rows.
 */
export async function writeFacets(
  tx: Tx,
  defs: TypeDefinitions,
  recordIds: readonly string[],
  rows: readonly RecordValuesTable[],
  load: FacetLoad | undefined,
): Promise<void> {
  const fields = rankedFields(defs);
  if (fields.size === 0) return;
  const wanted = new Map<string, Facet>();
  for (const r of rows) if (fields.has(r.field) && r.value_text !== null) wanted.set(sameValue(r as Facet), r as Facet);
  const old = recordIds.length > 0 ? await facetsOf(tx, recordIds, fields) : [];
  const kept = new Set(old.map(sameValue));
  const gone = old.filter((r) => !wanted.has(sameValue(r)));
  const come = [...wanted.values()].filter((r) => !kept.has(sameValue(r)));
  if (load) {
    for (const part of chunks(come, 300)) await deferred(tx, insertFacets(part, false));
    for (const g of byPartition(come.map((r) => ({ ...r, created_at: load.createdAt })))) {
      load.sets.set(g.values.join('\u0000'), g.values);
      rankLoadKeys(tx, FACETS, g.values, g.keys);
    }
    return;
  }
  if (gone.length + come.length === 0) return;
  // Every partition is taken before any of its rows is written, in the one order of every writer
  // (lockOrder: after the type's listing, which a create or delete took first).
  const parts = new Map([...gone, ...come].map((r) => [partition(r).join('\u0000'), { def: FACETS, values: partition(r) }]));
  for (const p of [...parts.values()].sort(lockOrder)) await lockPartition(tx, FACETS, p.values, 'insert');
  // The deletes go out with the first insert (src/db/pipeline.ts), whose answer comes after theirs.
  const deletes: { readonly rows?: RecordFacetsTable[] }[] = [];
  for (const part of chunks(gone, 100)) deletes.push(come.length > 0 ? await deferredRows(tx, deleteFacets(part)) : await deleteFacets(part).execute(tx));
  const inserted: RecordFacetsTable[] = [];
  for (const part of chunks(come, 300)) inserted.push(...(await insertFacets(part, true).execute(tx)).rows);
  const deleted = deletes.flatMap((d) => d.rows ?? []);
  for (const [rowsOf, count] of [
    [deleted, rankDelete],
    [inserted, rankInsert],
  ] as const) {
    for (const g of byPartition(rowsOf)) {
      // Taken already unless another write of the record changed it between the read and the delete.
      await lockPartition(tx, FACETS, g.values, 'insert');
      await count(tx, FACETS, g.values, g.keys);
    }
  }
}

/**
 * The facet rows the records hold now. Their records' rows are locked first (PostgreSQL, in a
 * transaction): two writes of one record then take turns from here, and the second reads the rows
 * the first one left, which it read in a snapshot of its own. Read before the first committed, both
 * would remove the same old row and each add its own value, leaving the record in two sets.
 */
async function facetsOf(db: Tx, recordIds: readonly string[], fields: ReadonlySet<string>): Promise<RecordFacetsTable[]> {
  // Nothing reads the lock's answer: it goes out with the read, which runs after it.
  for (const part of chunks([...recordIds])) await deferred(db, lockedForUpdate(db, db.selectFrom('records').select('id').where('id', 'in', part)));
  const out: RecordFacetsTable[] = [];
  for (const part of chunks([...recordIds]))
    out.push(
      ...(await db
        .selectFrom('record_facets')
        .selectAll()
        .where('record_id', 'in', part)
        .where('field', 'in', [...fields])
        .execute()),
    );
  return out;
}

const COLUMNS = sql`workspace_id, object_type, field, value_text, created_at, record_id`;

function deleteFacets(rows: readonly Facet[]) {
  const match = rows.map((r) => sql`(record_id = ${r.record_id} and field = ${r.field} and value_text = ${r.value_text} and workspace_id = ${r.workspace_id})`);
  return sql<RecordFacetsTable>`delete from record_facets where ${sql.join(match, sql` or `)} returning ${COLUMNS}`;
}

// Each row takes its record's createdAt from the record's row, written before it in the transaction.
function insertFacets(rows: readonly Facet[], returning: boolean) {
  const values = rows.map(
    (r) => sql`select cast(${r.record_id} as text) as record_id, cast(${r.field} as text) as field, cast(${r.value_text} as text) as value_text`,
  );
  return sql<RecordFacetsTable>`insert into record_facets (${COLUMNS})
    select r.workspace_id, r.kind, x.field, x.value_text, r.created_at, r.id from (${sql.join(values, sql` union all `)}) as x
    join records as r on r.id = x.record_id where true
    on conflict do nothing${returning ? sql` returning ${COLUMNS}` : sql``}`;
}

/** Facet rows by ranked set, each with its keys in the order given. */
function byPartition(rows: readonly (Facet & { created_at: string })[]): Iterable<{ values: string[]; keys: RankKey[] }> {
  const out = new Map<string, { values: string[]; keys: RankKey[] }>();
  for (const r of rows) {
    const values = partition(r);
    const k = values.join('\u0000');
    let g = out.get(k);
    if (!g) out.set(k, (g = { values, keys: [] }));
    g.keys.push({ ts: r.created_at, id: r.record_id });
  }
  return out.values();
}

/** After a bulk load of a type's first records: each set its rows went to counted (`rankLoadEnd`). */
export async function rankFacetsAfterLoad(tx: Tx, load: FacetLoad): Promise<void> {
  for (const values of load.sets.values()) await rankLoadEnd(tx, FACETS, values);
}

/** A page of the records holding `value` in `field`, newest first, and their number: one ranked partition. */
export async function pageByValue(db: Executor, workspaceId: string, objectType: string, field: string, value: string, page: Page) {
  const { total, rows } = await rankPage(db, FACETS, [workspaceId, objectType, field, value], page);
  return { totalCount: total, ids: rows.map((r) => r.id) };
}

/**
 * A page of the records of the type holding none of `values` in `field` (unset included), newest
 * first, and their number: the type's listing without the values' sets, counted (docs/filtering.md
 * §Ranked values). The sets are disjoint because a ranked field holds one value.
 */
export async function pageWithoutValues(db: Executor, workspaceId: string, objectType: string, field: string, values: readonly string[], page: Page) {
  const inner = [...new Set(values)].map((v) => ({ def: FACETS, values: [workspaceId, objectType, field, v] }));
  const { total, rows } = await rankExceptPage(db, { def: RECORDS, values: [workspaceId, objectType] }, inner, page);
  return { totalCount: total, ids: rows.map((r) => r.id) };
}
