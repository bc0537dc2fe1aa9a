// Row types of the tables this module owns.
export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: string;
  /** ISO 3166-1 alpha-2: where a telephone number written without `+` is placed (migration 0055); null: none. */
  default_country?: string | null;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    workspaces: WorkspacesTable;
  }
}
