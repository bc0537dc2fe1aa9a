// Row types of the tables this module owns.
export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    workspaces: WorkspacesTable;
  }
}
