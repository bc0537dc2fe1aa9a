// Row types of the tables this module owns.
export type RunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'timed_out';

export interface EnrichmentRunsTable {
  id: string;
  workspace_id: string;
  entity_type: 'account' | 'contact';
  entity_id: string;
  status: RunStatus;
  trigger: 'creation' | 'manual';
  /** JSON array of field keys. */
  target_fields: string;
  /** JSON array: the targets named by the request, which may be overwritten. */
  named_fields: string;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  due_at: string;
  lease_owner: string | null;
  attempts: number;
  error: string | null;
}

/** ENRICHMENT=on-create's place in the change log (docs/enrichment.md §Runs). */
export interface EnrichmentCursorTable {
  name: string;
  /** The last event considered: its creation run, if it needed one, is recorded. */
  seq: number | string;
  updated_at: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    enrichment_runs: EnrichmentRunsTable;
    enrichment_cursor: EnrichmentCursorTable;
  }
}
