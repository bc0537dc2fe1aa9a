// What each user's and the workspace's Knowledge holds: the files completed with a knowledge
// purpose (docs/design.md §Files). Operators see it through the CLI; the public API never does.
import type { Ctx } from '../lib/context.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import * as repo from './repository.ts';

export function toResource(r: repo.KnowledgeRow) {
  return {
    id: r.id,
    owner: r.owner_type,
    userId: r.user_id,
    fileId: r.file_id,
    filename: r.filename,
    mimeType: r.mime_type,
    sizeBytes: Number(r.size_bytes),
    addedAt: r.added_at as string,
  };
}

/** Newest first; only one user's entries with `userId`, only the workspace's with `owner: 'workspace'`. */
export async function listKnowledge(ctx: Ctx, input: { userId?: string; owner?: 'user' | 'workspace' } = {}) {
  await requireWorkspace(ctx);
  return (await repo.listEntries(ctx.db, ctx.actor.workspaceId, input)).map(toResource);
}
