// The import's check of unique fields (docs/records.md §Definitions, docs/import.md §Rules): a
// value of a field defined `unique` is refused when another line of the import holds it, or another
// record of the workspace, compared as the API compares it (through the value index: folded text,
// numbers as numbers). The API's writes check it under the lock of the type's listing; the import
// writes a type under that lock too (atomic: from its first chunk; batched: SQLite's one writer).
import type { TypeDefinitions } from '../definitions/service.ts';
import { ImportError, type ImportContext } from '../import/kind.ts';
import { foldText, indexedText } from '../lib/fold.ts';
import { recordIdsByValues, valueTaken } from './index/repository.ts';

/** One value of a unique field, on the line that writes it into record `id`. */
export interface UniqueValue {
  line: number;
  id: string;
  field: string;
  value: string | number | boolean;
}

/** The values of `stored` (a record's checked values) that unique fields hold and the index compares. */
export function uniqueValues(defs: TypeDefinitions, line: number, id: string, stored: Record<string, unknown>): UniqueValue[] {
  const out: UniqueValue[] = [];
  for (const [field, v] of Object.entries(stored)) {
    if (v === null || !defs.fields.get(field)?.unique) continue;
    for (const x of Array.isArray(v) ? (v as unknown[]) : [v])
      if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') out.push({ line, id, field, value: x });
  }
  return out;
}

const indexed = (v: UniqueValue['value']) => (typeof v === 'string' ? `t:${indexedText(foldText(v))}` : `n:${Number(v)}`);

/**
 * Refuses the first value another line of the import holds or, with `inWorkspace`, another record
 * of the type (a bulk load's type had none: its records are all of this import).
 */
export async function checkUniqueValues(ctx: ImportContext, kind: string, values: readonly UniqueValue[], inWorkspace: boolean): Promise<void> {
  const refuse = (u: UniqueValue, why: string) => {
    throw new ImportError(u.line, `fields.${u.field}.value`, `${JSON.stringify(u.value)}: ${why}; "${u.field}" is unique`);
  };
  for (const u of values) {
    const first = ctx.claim(`${kind}\u0000${u.field}`, indexed(u.value), u.line);
    if (first !== undefined && first !== u.line) refuse(u, `line ${first} gives it too`);
  }
  if (!inWorkspace) return;
  const ws = ctx.actor.workspaceId;
  for (const field of new Set(values.map((u) => u.field))) {
    const texts = values.filter((u) => u.field === field && typeof u.value === 'string');
    const holders = await recordIdsByValues(
      ctx.db,
      ws,
      kind,
      field,
      texts.map((u) => indexed(u.value).slice(2)),
    );
    for (const u of texts) if ((holders.get(indexed(u.value).slice(2)) ?? []).some((id) => id !== u.id)) refuse(u, `another ${kind} already holds it`);
    for (const u of values) {
      if (u.field === field && typeof u.value !== 'string' && (await valueTaken(ctx.db, ws, kind, field, u.value, u.id)))
        refuse(u, `another ${kind} already holds it`);
    }
  }
}
