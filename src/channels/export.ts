// `rolodex export` of a workspace's channels (docs/import.md §Export), as `channel` import lines,
// paged by keyset. A channel without an externalId is exported under its server id, and members
// are named as the `user` lines name users: a user's externalId, else its server id.
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';
import { channelsAfter, memberNames } from './repository.ts';

const PAGE = 500;

export async function* channelLines(ctx: Ctx): AsyncGenerator<Record<string, unknown>> {
  for await (const rows of keysetPages((after) => channelsAfter(ctx.db, ctx.actor.workspaceId, after, PAGE))) {
    const members = new Map<string, string[]>();
    const ids = rows.map((r) => r.id);
    for (const m of await memberNames(ctx.db, ids)) {
      const names = members.get(m.channel_id) ?? [];
      names.push(m.name);
      members.set(m.channel_id, names);
    }
    for (const c of rows)
      yield {
        object: 'channel',
        externalId: c.external_id ?? c.id,
        provider: c.provider,
        name: c.name,
        visibility: c.visibility,
        members: members.get(c.id) ?? [],
      };
  }
}
