// Row types of the tables this module owns.
export interface KnowledgeEntriesTable {
  id: string;
  workspace_id: string;
  file_id: string;
  owner_type: 'user' | 'workspace';
  user_id: string | null;
  /** 'pending' until the file completes. */
  state: 'pending' | 'active';
  created_at: string;
  added_at: string | null;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    knowledge_entries: KnowledgeEntriesTable;
  }
}
