// Row types of the tables this module owns.
export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  user_id: string | null;
  prefix: string;
  secret_hash: string;
  /** JSON array of public scopes; null means full access. */
  scopes: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    api_keys: ApiKeysTable;
  }
}
