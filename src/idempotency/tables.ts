// Row types of the tables this module owns.
export interface IdempotencyKeysTable {
  workspace_id: string;
  /** The route's operation (createList, …): a key names one request per workspace and operation. */
  operation: string;
  key: string;
  fingerprint: string;
  /**
   * 'pending' while the first request runs, then 'done' (successes only are stored); 'erased' once
   * a purge took out an answer that named the record (docs/trash.md §Purge).
   */
  state: 'pending' | 'done' | 'erased';
  status_code: number | null;
  body: string | null;
  locked_at: string;
  created_at: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    idempotency_keys: IdempotencyKeysTable;
  }
}
