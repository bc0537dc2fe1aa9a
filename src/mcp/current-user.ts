// What `get_current_user` answers (docs/mcp.md §Tools): the member a user key acts as, or the
// workspace of a workspace key, with the key's scopes. Never the key itself or its secret. A
// member's `name` holds the known parts of its name and is null when no part is known, so that an
// agent reads "no name" rather than an empty object; the member resource's `$name` keeps its
// FullName object, `{}` then, as docs/design.md §Members has it.
import { PUBLIC_SCOPES, type Principal } from '../auth/scopes.ts';
import type { Executor } from '../db/index.ts';
import { findUser } from '../users/repository.ts';
import { fullName } from '../users/service.ts';
import { findWorkspace } from '../workspaces/repository.ts';

function knownName(parts: { firstName?: string; lastName?: string }): { firstName?: string; lastName?: string } | null {
  return parts.firstName === undefined && parts.lastName === undefined ? null : parts;
}

export async function currentUser(db: Executor, p: Principal): Promise<Record<string, unknown>> {
  const scopes = { scopes: p.scopes ?? [...PUBLIC_SCOPES], fullAccess: p.scopes === null };
  const workspace = await findWorkspace(db, p.workspaceId);
  const ws = { workspace: { id: p.workspaceId, name: workspace?.name ?? null } };
  if (p.subjectType === 'user' && p.userId) {
    const user = await findUser(db, p.workspaceId, p.userId);
    return { subjectType: 'user', id: p.userId, name: user ? knownName(fullName(user)) : null, email: user?.email ?? null, role: p.role, ...ws, ...scopes };
  }
  return { subjectType: 'workspace', id: p.workspaceId, name: workspace?.name ?? null, email: null, role: null, ...ws, ...scopes };
}
