// Field value history (docs/history.md): one field of one record, newest first, in cursor pages.
// Rows are read through the history's primary key (record, field, seq) from the cursor down, so a
// page costs the same at any depth. Consecutive identical values show as the oldest of them: an
// entry is shown only when the next older one holds another value. The oldest entry comes from the
// record's starting snapshot (`*`): its value of the field then, null when it had none.
import { historyRowExists, historyRows, type HistoryRow, snapshotOf } from '../changes/repository.ts';
import type { FieldDef } from '../definitions/service.ts';
import type { Ctx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { type RecordType, requireDefinitions } from './resource.ts';
import { findRecord, type RecordRow } from './repository.ts';

export interface HistoryInput {
  id: string;
  fieldKey: string;
  after?: string | undefined;
  limit: number;
}

interface Entry {
  seq: number;
  value: unknown;
  recordedAt: string;
  isCreate: boolean;
}

const ADDRESS_PARTS = ['street', 'street2', 'city', 'state', 'postalCode', 'country', 'latitude', 'longitude'] as const;

const text = (v: unknown): string => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

/** The value as a person reads it (docs/history.md §displayValue). */
export function displayValue(def: FieldDef, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const label = (id: unknown) => def.options?.find((o) => o.id === id)?.label ?? String(id);
  switch (def.valueType) {
    case 'SINGLE_SELECT':
      return label(value);
    case 'MULTI_SELECT':
      return (value as unknown[]).map(label).join(', ');
    case 'FULL_NAME': {
      const n = value as { firstName?: string | null; lastName?: string | null };
      return [n.firstName, n.lastName].filter((p) => typeof p === 'string' && p !== '').join(' ');
    }
    case 'ADDRESS': {
      // Every part it holds, the coordinates too: an address of coordinates alone is a value, and
      // reads as them rather than as an empty text (docs/history.md §displayValue).
      const a = value as Record<string, unknown>;
      return ADDRESS_PARTS.map((k) => a[k])
        .filter((p) => (typeof p === 'string' && p !== '') || typeof p === 'number')
        .join(', ');
    }
    case 'CURRENCY':
      return def.currency ? `${text(value)} ${def.currency}` : text(value);
    default:
      return Array.isArray(value) ? value.map(text).join(', ') : text(value);
  }
}

/** A value in a form where equal values compare equal (object members sorted). */
function canonical(v: unknown): string {
  if (v !== null && typeof v === 'object' && !Array.isArray(v))
    return JSON.stringify(Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))));
  return JSON.stringify(v ?? null);
}

const toEntry = (r: HistoryRow): Entry => ({
  seq: r.seq,
  value: r.value === null ? null : JSON.parse(r.value),
  recordedAt: r.recorded_at,
  isCreate: r.is_create === 1,
});

// A cursor names the last entry a page showed and the record and field it pages, as
// `h<seq>.<record id>.<field key>` in base64url (opaque to callers): a cursor is taken only on the
// record and field it came from, in the form this endpoint writes it, and only while it names an
// entry of that field (docs/history.md §The answer). Anything else is 400 invalid_parameter.
const TOP = 2 ** 31 - 1;

function encodeCursor(recordId: string, fieldKey: string, seq: number): string {
  return Buffer.from(`h${seq}.${recordId}.${fieldKey}`).toString('base64url');
}

const badCursor = () => new AppError('invalid_parameter', '"after" is not a cursor this endpoint returned for this field of this record.', { param: 'after' });

/** The seq below which the page starts: the cursor's entry, or the top when there is none. */
function decodeCursor(input: HistoryInput): number {
  if (input.after === undefined) return TOP;
  const m = /^h([1-9]\d{0,9})\./.exec(Buffer.from(input.after, 'base64url').toString());
  const seq = Number(m?.[1]);
  if (!m || seq >= TOP || encodeCursor(input.id, input.fieldKey, seq) !== input.after) throw badCursor();
  return seq;
}

/** Rows read at most at once: a page of 100 entries whose values each repeat about 10 times. */
const MAX_BATCH = 1000;

/**
 * The entries older than seq `before`, newest first: the field's rows, then the starting one. Each
 * read takes twice the rows of the one before: a page whose values repeat (collapsed) needs more
 * rows than it shows, and gets them in a few reads rather than one per page's worth.
 */
async function* entries(ctx: Ctx, row: RecordRow, key: string, before: number, first: number): AsyncGenerator<Entry> {
  let bound = before;
  // Whether the field has rows of its own: a cursor names one.
  let changed = before !== TOP;
  for (let batch = first; ; batch = Math.min(batch * 2, MAX_BATCH)) {
    const rows = await historyRows(ctx.db, row.id, key, bound, batch);
    if (rows.length > 0) changed = true;
    for (const r of rows) yield toEntry(r);
    if (rows.length < batch) break;
    bound = rows[rows.length - 1]!.seq;
  }
  if (before === 0) return;
  const start = await snapshotOf(ctx.db, row.id);
  if (start) {
    const fields = JSON.parse(start.value ?? '{}') as Record<string, unknown>;
    yield { seq: 0, value: Object.hasOwn(fields, key) ? fields[key] : null, recordedAt: start.recorded_at, isCreate: start.is_create === 1 };
  } else if (!changed) {
    // A record whose start no writer recorded (a writer of an earlier version), and a field with
    // no change recorded since: the value it holds now is the one it always held. A field with
    // changes has no entry below them: its value before the first is unknown, and its value now
    // is already the newest entry.
    const fields = JSON.parse(row.fields) as Record<string, unknown>;
    yield { seq: 0, value: Object.hasOwn(fields, key) ? fields[key] : null, recordedAt: row.updated_at, isCreate: false };
  }
}

export async function fieldHistory(ctx: Ctx, input: HistoryInput & { type: RecordType }) {
  const { type } = input;
  const before = decodeCursor(input);
  const row = await findRecord(ctx.db, ctx.actor.workspaceId, type.objectType, input.id);
  if (!row) throw notFound(type.objectType, input.id);
  const defs = await requireDefinitions(ctx, type.objectType);
  const def = defs.fields.get(input.fieldKey);
  if (!def) throw new AppError('unknown_field', `"${input.fieldKey}" is not a field of ${type.article} ${type.objectType}.`, { param: 'fieldKey' });
  if (before !== TOP && !(await historyRowExists(ctx.db, row.id, def.key, before))) throw badCursor();
  const shown: Entry[] = [];
  let held: Entry | undefined;
  for await (const e of entries(ctx, row, def.key, before, input.limit + 2)) {
    if (held && canonical(held.value) !== canonical(e.value)) {
      shown.push(held);
      if (shown.length > input.limit) break;
    }
    held = e;
  }
  if (held && shown.length <= input.limit) shown.push(held);
  const hasMore = shown.length > input.limit;
  const page = shown.slice(0, input.limit);
  return {
    data: page.map((e) => ({
      value: e.value,
      valueType: def.valueType,
      displayValue: displayValue(def, e.value),
      recordedAt: e.recordedAt,
      isCreate: e.isCreate,
    })),
    hasMore,
    nextCursor: hasMore ? encodeCursor(row.id, def.key, page[page.length - 1]!.seq) : null,
  };
}
