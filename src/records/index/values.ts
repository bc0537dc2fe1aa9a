// The rows of the value index for one record (docs/records.md §Value index), from its stored
// values and its type's definitions. Every writer of records (the API, the import, migrations)
// builds them here, so the index means the same thing whoever wrote the record.
import type { TypeDefinitions } from '../../definitions/service.ts';
import { emailKey, emailRootedSpelling, emailUnicodeSpelling, unrooted } from '../../lib/email.ts';
import { foldText, indexedText } from '../../lib/fold.ts';
import type { RecordValuesTable } from '../tables.ts';

const NUMERIC = new Set(['NUMBER', 'CURRENCY', 'CHECKBOX']);
const ADDRESS_PARTS = ['street', 'street2', 'city', 'state', 'postalCode', 'country'] as const;

/** What a FULL_NAME is matched as: the known parts joined by one space (`firstName lastName`). */
export function fullNameText(v: Record<string, unknown>): string | null {
  const parts = [v.firstName, v.lastName].filter((x): x is string => typeof x === 'string' && x !== '');
  return parts.length > 0 ? parts.join(' ') : null;
}

/**
 * The host of a URL value, folded and without a final dot (`https://acme.test./` is on
 * `acme.test`, as an address's domain is compared: src/lib/email.ts), or null when it is not a URL
 * (a bare `acme.com` counts as one).
 */
export function urlHost(v: string): string | null {
  for (const candidate of [v, `https://${v}`]) {
    try {
      const u = new URL(candidate);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '') return foldText(unrooted(u.hostname));
    } catch {
      // not a URL this way; try the next
    }
  }
  return null;
}

/** One scalar of a field's value as the value index holds it: folded text, or a number. */
export type IndexedScalar = { text: string; num?: undefined } | { num: number; text?: undefined };

/**
 * The index form of `v`, one scalar (an element of a multi-valued field) of a field of
 * `valueType`, or undefined when the index holds no row for it: a DATETIME as its instant in ms,
 * numbers, currencies and checkboxes (1/0) as numbers, text folded and cut as indexedText cuts it,
 * an EMAIL as its key (its domain in ASCII, src/lib/email.ts). FULL_NAME and ADDRESS values are
 * objects, indexed by valueRows alone.
 */
export function indexedScalar(valueType: string, v: unknown): IndexedScalar | undefined {
  if (valueType === 'DATETIME' && typeof v === 'string') return finite(Date.parse(v));
  if (valueType === 'EMAIL' && typeof v === 'string') return { text: indexedText(emailKey(v)) };
  if (NUMERIC.has(valueType) && (typeof v === 'number' || typeof v === 'boolean')) return finite(Number(v));
  return typeof v === 'string' ? { text: indexedText(foldText(v)) } : undefined;
}

const finite = (n: number): IndexedScalar | undefined => (Number.isFinite(n) ? { num: n } : undefined);

/**
 * One row per scalar value, so that a value matches when any of its rows does: text folded into
 * value_text (select values are option ids); numbers, currencies and checkboxes (1/0) and
 * DATETIMEs (ms since epoch, so that ranges and "the same instant" compare as numbers) into
 * value_num; a multi-valued field one row per element; a FULL_NAME one row for
 * `firstName lastName`; an ADDRESS one row per text part.
 * Text longer than INDEXED_TEXT_BYTES is kept as its prefix (src/lib/fold.ts).
 * An account's `$website` also gives the host of each URL, under `$website.host` (meetings link
 * new contacts to accounts by domain). An EMAIL whose domain has an ASCII-encoded label gives a
 * second row, its Unicode spelling, so that `contains` finds a part of either spelling, and one
 * written with its domain's final dot a row of its key with the dot and a space, so that
 * `contains` finds it as written (docs/records.md §E-mail addresses).
 */
export function valueRows(workspaceId: string, defs: TypeDefinitions, recordId: string, values: Record<string, unknown>): RecordValuesTable[] {
  const rows: RecordValuesTable[] = [];
  const add = (field: string, x: IndexedScalar | undefined) => {
    if (x !== undefined)
      rows.push({ workspace_id: workspaceId, object_type: defs.objectType, field, value_text: x.text ?? null, value_num: x.num ?? null, record_id: recordId });
  };
  const text = (field: string, v: unknown) => add(field, indexedScalar('TEXT', v));
  for (const [key, v] of Object.entries(values)) {
    const def = defs.fields.get(key);
    if (!def || v === null || v === undefined) continue;
    if (def.valueType === 'FULL_NAME' && typeof v === 'object') text(key, fullNameText(v as Record<string, unknown>));
    else if (def.valueType === 'ADDRESS' && typeof v === 'object') for (const part of ADDRESS_PARTS) text(key, (v as Record<string, unknown>)[part]);
    else if (Array.isArray(v)) for (const x of v) add(key, indexedScalar(def.valueType, x));
    else add(key, indexedScalar(def.valueType, v));
    if (key === '$website') for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string') text('$website.host', urlHost(x));
    if (def.valueType === 'EMAIL')
      for (const x of Array.isArray(v) ? v : [v])
        if (typeof x === 'string') {
          text(key, emailUnicodeSpelling(x));
          text(key, emailRootedSpelling(x));
        }
  }
  return rows;
}
