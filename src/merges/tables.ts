// Row types of merges (docs/merge.md).
export interface MergesTable {
  id: string;
  workspace_id: string;
  /** The merged records' type: a system type or a custom object slug. */
  entity_type: string;
  primary_id: string;
  duplicate_id: string;
  status: 'cleanup_pending' | 'done' | 'failed';
  created_at: string;
  updated_at: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    merges: MergesTable;
  }
}
