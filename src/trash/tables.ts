// Row types of the trash (docs/trash.md). A trashed record's rows leave their tables for these, so
// nothing that reads the live tables can see it.
export interface TrashTable {
  /** The trashed record's own id (acc_…, con_…, mtg_…, lst_…). */
  id: string;
  workspace_id: string;
  /** A record kind (system or custom slug), `meeting` or `list`. */
  object_type: string;
  deleted_at: string;
  /** The primary a merge kept; a merged record cannot be restored. */
  merged_into: string | null;
  /** JSON: the resource a repeated delete answers (a meeting at FULL access). */
  resource: string;
  /** JSON: the rows to put back on restore (TrashPayload in service.ts). */
  payload: string;
}

/** A row of entity_relationships that touched a trashed record, held by the entry that brings it back. */
export interface TrashLinksTable {
  trash_id: string;
  source_id: string;
  name: string;
  object_type: string;
  target_id: string;
  position: number;
}

/** A row of list_members held by the trash entry of its list or of its member. */
export interface TrashMembersTable {
  trash_id: string;
  list_id: string;
  entity_id: string;
  added_at: string;
}

/**
 * The transcript link of a meeting in the trash, with the meeting's privacy: what decides who may
 * have the transcript's bytes meanwhile (docs/files.md §Who downloads the bytes).
 */
export interface TrashTranscriptsTable {
  /** The trashed meeting's id (its entry's). */
  id: string;
  workspace_id: string;
  file_id: string;
  privacy_setting: 'FULL' | 'METADATA' | null;
}

/** A participant (folded address) of a meeting in the trash that held a transcript. */
export interface TrashParticipantsTable {
  meeting_id: string;
  email: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    trash: TrashTable;
    trash_links: TrashLinksTable;
    trash_members: TrashMembersTable;
    trash_transcripts: TrashTranscriptsTable;
    trash_participants: TrashParticipantsTable;
  }
}
