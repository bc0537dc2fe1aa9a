// Row types of the tables this module owns.
export interface UsersTable {
  id: string;
  workspace_id: string;
  external_id: string | null;
  email: string;
  /**
   * The address's key (emailKey: its domain in ASCII), unique in the workspace, what creating and
   * finding a user by address compare; null only for a user that migration 0080 found holding an
   * earlier user's address in another form (docs/design.md §Members).
   */
  email_key: string | null;
  /** The parts of the name; a part not known is null (docs/design.md §Members). */
  first_name: string | null;
  last_name: string | null;
  profile_image_url: string | null;
  role: 'admin' | 'member';
  created_at: string;
  updated_at: string;
}

/** Users per workspace, kept with every insert (the members' totalCount comes from their ranked index). */
export interface WorkspaceUserCountsTable {
  workspace_id: string;
  user_count: number;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    users: UsersTable;
    workspace_user_counts: WorkspaceUserCountsTable;
  }
}
