// The public scopes (docs/design.md §Scopes): <resource>:<create|update|read|delete>. A key holds
// a subset, or full access.
export const PUBLIC_SCOPES = [
  'lists:create',
  'lists:update',
  'lists:read',
  'accounts:create',
  'accounts:update',
  'accounts:read',
  'contacts:create',
  'contacts:update',
  'contacts:read',
  'opportunities:create',
  'opportunities:update',
  'opportunities:read',
  'tasks:create',
  'tasks:update',
  'tasks:read',
  'notes:create',
  'notes:update',
  'notes:read',
  'meetings:create',
  'meetings:update',
  'meetings:read',
  'emails:create',
  'emails:read',
  'members:read',
  'custom_objects:create',
  'custom_objects:update',
  'custom_objects:read',
  'messages:read',
  'files:create',
  'files:read',
  'channels:read',
  'accounts:delete',
  'contacts:delete',
  'opportunities:delete',
  'tasks:delete',
  'notes:delete',
  'meetings:delete',
  'lists:delete',
  'custom_objects:delete',
] as const;

export type Scope = (typeof PUBLIC_SCOPES)[number];

export function isScope(s: string): s is Scope {
  return (PUBLIC_SCOPES as readonly string[]).includes(s);
}

/** Who is calling: resolved from the API key on every /v1 request. */
export interface Principal {
  keyId: string;
  workspaceId: string;
  subjectType: 'user' | 'workspace';
  /** Set for user keys. */
  userId: string | null;
  /** The user's role, for user keys. */
  role: 'admin' | 'member' | null;
  /** null means full access. */
  scopes: readonly Scope[] | null;
  /** When the key itself expires (ISO), if ever. */
  expiresAt: string | null;
}
