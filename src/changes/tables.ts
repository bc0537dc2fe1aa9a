// Row types of the change log (docs/events.md, docs/history.md): events and field history.
import type { Generated } from 'kysely';

export interface EventsTable {
  /** Generated: orders the events of one record as their writes committed. */
  seq: Generated<number | string>;
  id: string;
  workspace_id: string;
  type: string;
  /** The id of the resource the event is about: webhooks deliver one object's events in order. */
  object_id: string;
  occurred_at: string;
  /** The event as delivered, JSON. */
  body: string;
}

export interface FieldHistoryTable {
  record_id: string;
  /** A field key, or `*` for the record's starting snapshot (seq 0). */
  field: string;
  /** The field's change count: 1, 2, … (0 for `*`). */
  seq: number;
  workspace_id: string;
  /** JSON of the stored value (null when cleared); for `*`, the JSON object of every field. */
  value: string | null;
  recorded_at: string;
  is_create: number;
}

declare module '../db/types.ts' {
  interface Database {
    events: EventsTable;
    field_history: FieldHistoryTable;
  }
}
