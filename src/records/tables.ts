// Row types of records and of the relationships table (shared with messages).
export type RecordKind = 'account' | 'contact' | 'opportunity' | 'task' | 'note';

export interface RecordsTable {
  id: string;
  workspace_id: string;
  /** A system type (RecordKind) or the slug of a custom object type. */
  kind: string;
  external_id: string | null;
  /** JSON: { name: { value, valueType } } */
  fields: string;
  created_at: string;
  updated_at: string;
}

export interface EntityRelationshipsTable {
  source_id: string;
  /** `$owner`, `$account`, `$files`, … */
  name: string;
  object_type: string;
  target_id: string;
  position: number;
}

/**
 * The value index of records (docs/records.md §Value index): one row per scalar value of a field
 * (one per element of an array), written in the transaction of every record write. Text is
 * folded for case-insensitive matching; numbers, currencies and checkboxes go to value_num.
 */
export interface RecordValuesTable {
  workspace_id: string;
  object_type: string;
  field: string;
  value_text: string | null;
  value_num: number | null;
  record_id: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    records: RecordsTable;
    entity_relationships: EntityRelationshipsTable;
    record_values: RecordValuesTable;
  }
}
