// Row types of the foundation tables. Each resource module declares its own tables beside its
// code; src/db/database.ts joins them into the one Database type Kysely checks queries against.
export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: string;
}

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

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  user_id: string | null;
  prefix: string;
  secret_hash: string;
  /** JSON array of public scopes; null means full access. */
  scopes: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  key: string;
  fingerprint: string;
  /** 'pending' while the first request runs, then 'done'. */
  state: 'pending' | 'done';
  status_code: number | null;
  body: string | null;
  locked_at: string;
  created_at: string;
}

export interface FoundationTables {
  workspaces: WorkspacesTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
}
