// The rows of the value index for one record (docs/records.md §Value index), from its stored
// values and its type's definitions. Every writer of records (the API, the import, migrations)
// builds them here, so the index means the same thing whoever wrote the record.
import type { TypeDefinitions } from '../definitions/service.ts';
import { foldText } from '../lib/fold.ts';
import type { RecordValuesTable } from './tables.ts';

const NUMERIC = new Set(['NUMBER', 'CURRENCY', 'CHECKBOX']);

function scalar(v: unknown): { text: string | null; num: number | null } | null {
  if (typeof v === 'string') return { text: foldText(v), num: null };
  if (typeof v === 'number') return { text: null, num: v };
  if (typeof v === 'boolean') return { text: null, num: v ? 1 : 0 };
  return null;
}

/** The host of a URL value, folded, or null when it is not a URL (a bare `acme.com` counts as one). */
export function urlHost(v: string): string | null {
  for (const candidate of [v, `https://${v}`]) {
    try {
      const u = new URL(candidate);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '') return foldText(u.hostname);
    } catch {
      // not a URL this way; try the next
    }
  }
  return null;
}

/**
 * One row per scalar value: strings folded into value_text (select values are option ids, kept as
 * they are folded, which changes nothing), numbers and checkboxes into value_num. An ADDRESS or
 * FULL_NAME is indexed by each of its parts, under `<key>.<part>` (`$name.lastName`). A URL value
 * also gives its host, under `<key>.host` (`$website.host`: meetings link new contacts by domain).
 */
export function valueRows(workspaceId: string, defs: TypeDefinitions, recordId: string, values: Record<string, unknown>): RecordValuesTable[] {
  const rows: RecordValuesTable[] = [];
  const push = (field: string, v: unknown) => {
    const s = scalar(v);
    if (s) rows.push({ workspace_id: workspaceId, object_type: defs.objectType, field, value_text: s.text, value_num: s.num, record_id: recordId });
  };
  for (const [key, v] of Object.entries(values)) {
    const def = defs.fields.get(key);
    if (!def || v === null || v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) push(key, x);
    else if (typeof v === 'object') for (const [part, x] of Object.entries(v as Record<string, unknown>)) push(`${key}.${part}`, x);
    else if (NUMERIC.has(def.valueType) || typeof v === 'string') push(key, v);
    if (def.valueType === 'URL') for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string') push(`${key}.host`, urlHost(x));
  }
  return rows;
}
