// Records for filter tests, written through the primitives every record writer uses (records row,
// ranked set, value index, trigram index), and a full-scan oracle of the filter rules
// (docs/filtering.md) to compare the module's answers with.
import type { Executor } from '../../src/db/types.ts';
import { inWrite } from '../../src/db/write.ts';
import { rankInsert } from '../../src/db/rank/index.ts';
import type { TypeDefinitions } from '../../src/definitions/service.ts';
import { foldText } from '../../src/lib/fold.ts';
import { valueRows } from '../../src/records/index/values.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { writeValueIndex } from '../../src/records/index/repository.ts';
import type { RecordKind, RecordValuesTable } from '../../src/records/tables.ts';

export interface Written {
  id: string;
  createdAt: string;
  rows: RecordValuesTable[];
  rels: Map<string, string[]>;
}

/** Writes the record in `db`'s transaction, or in one of its own on a handle. */
export async function writeRecord(
  db: Executor,
  defs: TypeDefinitions,
  ws: string,
  r: { id: string; createdAt: string; values: Record<string, unknown>; rels?: Record<string, string[]> },
): Promise<Written> {
  return inWrite(db, async (tx) => {
    const kind = defs.objectType as RecordKind;
    await tx
      .insertInto('records')
      .values({ id: r.id, workspace_id: ws, kind, external_id: null, fields: JSON.stringify(r.values), created_at: r.createdAt, updated_at: r.createdAt })
      .execute();
    await rankInsert(tx, RECORDS, [ws, kind], [{ ts: r.createdAt, id: r.id }]);
    const rows = valueRows(ws, defs, r.id, r.values);
    await writeValueIndex(tx, defs, [r.id], rows);
    const rels = new Map(Object.entries(r.rels ?? {}));
    for (const [name, targets] of rels) {
      const objectType = defs.relationships.get(name)!.objectType;
      await tx
        .insertInto('entity_relationships')
        .values(targets.map((target_id, position) => ({ source_id: r.id, name, object_type: objectType, target_id, position })))
        .execute();
    }
    return { id: r.id, createdAt: r.createdAt, rows, rels };
  });
}

export type Op = 'equal' | 'greaterThan' | 'greaterThanOrEqual' | 'lessThan' | 'lessThanOrEqual' | 'startsWith' | 'contains';

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  equal: (a, b) => a === b,
  greaterThan: (a, b) => a > b,
  greaterThanOrEqual: (a, b) => a >= b,
  lessThan: (a, b) => a < b,
  lessThanOrEqual: (a, b) => a <= b,
};

/** Whether a record matches one positive filter, from its value-index rows (a full scan's view). */
export function matches(w: Written, field: string, op: Op, value: string | number): boolean {
  const rows = w.rows.filter((r) => r.field === field);
  if (typeof value === 'number') {
    return rows.some((r) => r.value_num !== null && COMPARE[op]!(r.value_num, value));
  }
  const v = foldText(value);
  return rows.some((r) => {
    const t = r.value_text;
    if (t === null) return false;
    // An empty startsWith asks for a non-empty text.
    return op === 'equal' ? t === v : op === 'startsWith' ? t.startsWith(v) && t !== '' : t.includes(v);
  });
}
