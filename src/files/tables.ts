// Tables owned by files and knowledge.
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
  expires_at: string | null;
  upload_deadline: string;
}

export interface FileCountsTable {
  workspace_id: string;
  listable: number;
}

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

export interface BlobGarbageTable {
  blob_key: string;
  not_before: string;
}

export interface FilesTables {
  files: FilesTable;
  file_counts: FileCountsTable;
  knowledge_entries: KnowledgeEntriesTable;
  blob_garbage: BlobGarbageTable;
}
