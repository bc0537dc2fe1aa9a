// Row types of the tables this module owns.
import type { RecordKind } from '../records/tables.ts';

export interface ListsTable {
  id: string;
  workspace_id: string;
  /** Given by `rolodex import` only; unique in the workspace. */
  external_id: string | null;
  name: string;
  object_type: RecordKind;
  member_count: number;
  created_at: string;
  updated_at: string;
}

export interface ListMembersTable {
  list_id: string;
  entity_id: string;
  added_at: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    lists: ListsTable;
    list_members: ListMembersTable;
  }
}
