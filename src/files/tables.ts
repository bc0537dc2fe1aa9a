// Row types of the tables this module owns.
export type FileStatus = 'PENDING' | 'COMPLETED' | 'CANCELLED' | 'EXPIRED';
export type FileSource = 'api' | 'app' | 'chat_attachment';

export interface FilesTable {
  id: string;
  workspace_id: string;
  external_id: string | null;
  source: FileSource;
  status: FileStatus;
  filename: string;
  mime_type: string;
  size_bytes: number;
  md5: string | null;
  blob_key: string | null;
  created_at: string;
  completed_at: string | null;
  /** When a re-import last replaced the bytes of the COMPLETED file; null when it never did. */
  bytes_changed_at: string | null;
  expires_at: string | null;
  upload_deadline: string;
  /** The purpose the file was created with (docs/design.md §Files); never returned. Null without one. */
  purpose: string | null;
}

export interface FileCountsTable {
  workspace_id: string;
  listable: number;
}

export interface BlobGarbageTable {
  blob_key: string;
  not_before: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    files: FilesTable;
    file_counts: FileCountsTable;
    blob_garbage: BlobGarbageTable;
  }
}
