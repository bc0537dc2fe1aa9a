// Tables owned by lists (records' tables are joined in here so database.ts needs no change).
import type { RecordKind, RecordsTables } from '../records/tables.ts';

export interface ListsTable {
  id: string;
  workspace_id: string;
  name: string;
  object_type: RecordKind;
  member_count: number;
  created_at: string;
  updated_at: string;
}

export interface WorkspaceListCountsTable {
  workspace_id: string;
  list_count: number;
}

export interface ListMembersTable {
  list_id: string;
  entity_id: string;
  added_at: string;
}

export interface ListsTables extends RecordsTables {
  lists: ListsTable;
  workspace_list_counts: WorkspaceListCountsTable;
  list_members: ListMembersTable;
}
