// Row types of the tables this module owns.
export interface UsersTable {
  id: string;
  workspace_id: string;
  external_id: string | null;
  email: string;
  name: string | null;
  role: 'admin' | 'member';
  created_at: string;
  updated_at: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    users: UsersTable;
  }
}
