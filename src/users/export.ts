// `rolodex export` of a workspace's users (docs/import.md §Export), as `user` import lines, paged
// by keyset. A user without an externalId is exported under its server id.
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';

export async function* userLines(ctx: Ctx): AsyncGenerator<Record<string, unknown>> {
  const page = (after: string) =>
    ctx.db.selectFrom('users').selectAll().where('workspace_id', '=', ctx.actor.workspaceId).where('id', '>', after).orderBy('id').limit(500).execute();
  for await (const rows of keysetPages(page)) {
    for (const u of rows)
      yield {
        object: 'user',
        externalId: u.external_id ?? u.id,
        email: u.email,
        ...(u.first_name !== null ? { firstName: u.first_name } : {}),
        ...(u.last_name !== null ? { lastName: u.last_name } : {}),
        role: u.role,
        ...(u.profile_image_url !== null ? { profileImageUrl: u.profile_image_url } : {}),
      };
  }
}
