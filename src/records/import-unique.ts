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
import { recordIdsByValues, valueHolders } from './index/repository.ts';
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
 * Refuses the first line (in file order) with a value another line of the import gives before it
 * or, with `inWorkspace`, another record of the type holds (a bulk load's type had none: its records
 * are all of this import). `values` are in line order. Lines are judged in file order whatever the
 * chunks (docs/import.md §Rules, Unique fields): a record that an earlier line of `values`' batch
 * rewrites (`rewritten`: its id → that line; it is not yet written) no longer holds its old values
 * for a later line, since a value it keeps is one its line gives, refused as given twice; for an
 * earlier line it still holds them, as it does once written when the lines are in two batches.
 */
export async function checkUniqueValues(
  ctx: ImportContext,
  kind: string,
  values: readonly UniqueValue[],
  inWorkspace: boolean,
  rewritten: ReadonlyMap<string, number> = new Map(),
): Promise<void> {
  let twice: ImportError | undefined;
  for (const u of values) {
    const first = ctx.claim(`${kind}\u0000${u.field}`, claimKey(u.indexed), u.line, `${u.id}\t${JSON.stringify(u.value)}`);
    if (first !== undefined && first !== u.line) {
      twice = refusal(u, `line ${first} gives it too`);
      break;
    }
  }
  // A line before the one given twice may take a value a record holds: the earliest line is refused.
  const before = twice === undefined ? values : values.filter((u) => u.line < twice.line);
  const held = inWorkspace && before.length > 0 ? await heldElsewhere(ctx, kind, before, `another ${kind} already holds it`, rewritten) : undefined;
  const error = held ?? twice;
  if (error) throw error;
}

const refusal = (u: UniqueValue, why: string, member = u.member ?? 'fields') =>
  new ImportError(u.line, `${member}.${u.field}.value`, `${JSON.stringify(u.value)}: ${why}; "${u.field}" is unique`);

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
    const error = batch.length > 0 ? await heldElsewhere(ctx, kind, batch, `another ${kind} holds it, written while this import ran`) : undefined;
    if (error) throw error;
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

/**
 * The refusal of the earliest line whose value a record of the type holds: a record other than the
 * value's own, and other than one an earlier line rewrites (`rewritten`, as checkUniqueValues).
 */
async function heldElsewhere(
  ctx: ImportContext,
  kind: string,
  values: readonly UniqueValue[],
  why: string,
  rewritten: ReadonlyMap<string, number> = new Map(),
): Promise<ImportError | undefined> {
  let first: { u: UniqueValue; member?: string } | undefined;
  const holds = (u: UniqueValue, ids: readonly string[]) => ids.some((id) => id !== u.id && !((rewritten.get(id) ?? Infinity) < u.line));
  const refuse = (u: UniqueValue, member?: string) => {
    if (first === undefined || u.line < first.u.line) first = { u, member };
  };
  const ws = ctx.actor.workspaceId;
  const archived = (await loadDefinitions(ctx, { objectType: kind }))?.archived;
  for (const field of new Set(values.map((u) => u.field))) {
    // An archived field's holders are read from the records, which the value index does not follow.
    const hidden = archived?.get(field);
    if (hidden) {
      const holders = await archivedValueHolders(ctx.db, ws, kind, hidden);
      for (const u of values) if (u.field === field && holds(u, holders.get(uniqueKey(u.indexed)) ?? [])) refuse(u, 'archivedFields');
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
    for (const u of texts) if (holds(u, holders.get(u.indexed.text ?? '') ?? [])) refuse(u);
    for (const u of values)
      if (u.field === field && u.indexed.num !== undefined && holds(u, await valueHolders(ctx.db, ws, kind, field, u.indexed, u.id))) refuse(u);
  }
  return first && refusal(first.u, why, first.member);
}
