// Row types of records and of the relationships table (shared with messages).
export type RecordKind = 'account' | 'contact' | 'opportunity';

export interface RecordsTable {
  id: string;
  workspace_id: string;
  kind: RecordKind;
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

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    records: RecordsTable;
    entity_relationships: EntityRelationshipsTable;
  }
}
