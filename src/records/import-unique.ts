// The import's check of unique fields (docs/records.md §Definitions, docs/import.md §Rules): a
// value of a field defined `unique` is refused when another line of the import holds it, or another
// record of the workspace, compared as the API compares it (through the value index: folded text,
// numbers as numbers). The API's writes check it under the lock of the type's listing. A batched
// import writes each chunk under it too (SQLite's one writer); an atomic one on PostgreSQL takes
// it only just before COMMIT (docs/import.md §Sharing the database), so its chunks' checks do not
// see what the API committed meanwhile, and every claimed value is checked again under the lock
// (`recheckUniqueValues`).
import { loadDefinitions, type TypeDefinitions } from '../definitions/service.ts';
import { archivedValueHolders, uniqueKey } from './definitions-view.ts';
import { ImportError, type ImportContext } from '../import/kind.ts';
import { recordIdsByValues, valueTaken } from './index/repository.ts';
import { type IndexedScalar, indexedScalar } from './index/values.ts';

/** One value of a unique field, on the line that writes it into record `id`. */
export interface UniqueValue {
  line: number;
  id: string;
  field: string;
  /** The line's member that gives it: `archivedFields` for an archived field's (docs/import.md §account). */
  member?: 'archivedFields';
  value: string | number | boolean;
  /** The value as the index holds it. */
  indexed: IndexedScalar;
}

/** The values of `stored` (a record's checked values) that unique fields hold and the index compares. */
export function uniqueValues(defs: TypeDefinitions, line: number, id: string, stored: Record<string, unknown>): UniqueValue[] {
  const out: UniqueValue[] = [];
  for (const [field, v] of Object.entries(stored)) {
    // An archived unique field's values stay unique too: unarchive brings them back (docs/import.md §Rules).
    const def = defs.fields.get(field) ?? defs.archived.get(field);
    if (v === null || !def?.unique) continue;
    for (const x of Array.isArray(v) ? (v as unknown[]) : [v]) {
      const indexed = indexedScalar(def.valueType, x);
      if (indexed !== undefined && (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean'))
        out.push({ line, id, field, ...(defs.fields.has(field) ? {} : { member: 'archivedFields' as const }), value: x, indexed });
    }
  }
  return out;
}

/** A claim's key: the index form, `t:` text or `n:` number, so the import compares as the index does. */
const claimKey = (x: IndexedScalar) => (x.text !== undefined ? `t:${x.text}` : `n:${x.num}`);
const fromClaimKey = (key: string): IndexedScalar => (key.startsWith('t:') ? { text: key.slice(2) } : { num: Number(key.slice(2)) });

/**
 * Refuses the first value another line of the import holds or, with `inWorkspace`, another record
 * of the type (a bulk load's type had none: its records are all of this import).
 */
export async function checkUniqueValues(ctx: ImportContext, kind: string, values: readonly UniqueValue[], inWorkspace: boolean): Promise<void> {
  const refuse = (u: UniqueValue, why: string) => {
    throw new ImportError(u.line, `${u.member ?? 'fields'}.${u.field}.value`, `${JSON.stringify(u.value)}: ${why}; "${u.field}" is unique`);
  };
  for (const u of values) {
    const first = ctx.claim(`${kind}\u0000${u.field}`, claimKey(u.indexed), u.line, `${u.id}\t${JSON.stringify(u.value)}`);
    if (first !== undefined && first !== u.line) refuse(u, `line ${first} gives it too`);
  }
  if (inWorkspace) await heldElsewhere(ctx, kind, values, `another ${kind} already holds it`);
}

/**
 * Checks every value the import claimed for the types `ofType` accepts against the rest of the
 * workspace again, under the listings' locks: a value an API write took while the import ran is
 * refused as one taken before it is.
 */
export async function recheckUniqueValues(ctx: ImportContext, ofType: (type: string) => boolean): Promise<void> {
  let batch: UniqueValue[] = [];
  let group = '';
  const flush = async () => {
    const kind = group.slice(0, group.indexOf('\u0000'));
    if (batch.length > 0) await heldElsewhere(ctx, kind, batch, `another ${kind} holds it, written while this import ran`);
    batch = [];
  };
  for (const c of ctx.claims()) {
    if (c.group !== group) await flush();
    group = c.group;
    const [kind, field] = c.group.split('\u0000') as [string, string];
    if (!ofType(kind)) continue;
    const tab = c.note.indexOf('\t');
    const value = JSON.parse(c.note.slice(tab + 1)) as UniqueValue['value'];
    batch.push({ line: c.line, id: c.note.slice(0, tab), field, value, indexed: fromClaimKey(c.value) });
    if (batch.length >= 1000) await flush();
  }
  await flush();
}

/** Refuses the first value that a record of the type other than the value's own holds. */
async function heldElsewhere(ctx: ImportContext, kind: string, values: readonly UniqueValue[], why: string): Promise<void> {
  const refuse = (u: UniqueValue, member = u.member ?? 'fields') => {
    throw new ImportError(u.line, `${member}.${u.field}.value`, `${JSON.stringify(u.value)}: ${why}; "${u.field}" is unique`);
  };
  const ws = ctx.actor.workspaceId;
  const archived = (await loadDefinitions(ctx, { objectType: kind }))?.archived;
  for (const field of new Set(values.map((u) => u.field))) {
    // An archived field's holders are read from the records, which the value index does not follow.
    const hidden = archived?.get(field);
    if (hidden) {
      const holders = await archivedValueHolders(ctx.db, ws, kind, hidden);
      for (const u of values) if (u.field === field && (holders.get(uniqueKey(u.indexed)) ?? []).some((id) => id !== u.id)) refuse(u, 'archivedFields');
      continue;
    }
    // Texts are looked up together; numbers (and DATETIMEs, as instants) one by one.
    const texts = values.filter((u) => u.field === field && u.indexed.text !== undefined);
    const holders = await recordIdsByValues(
      ctx.db,
      ws,
      kind,
      field,
      texts.map((u) => u.indexed.text ?? ''),
    );
    for (const u of texts) if ((holders.get(u.indexed.text ?? '') ?? []).some((id) => id !== u.id)) refuse(u);
    for (const u of values) if (u.field === field && u.indexed.num !== undefined && (await valueTaken(ctx.db, ws, kind, field, u.indexed, u.id))) refuse(u);
  }
}
