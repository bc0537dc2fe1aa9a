// `rolodex export` of a workspace's mailboxes (docs/import.md §Export), as `mailbox` import lines,
// paged by keyset. A mailbox or its owner without an externalId is named by its server id, as the
// `user` lines name users. A removed mailbox is written with its `removedAt`: its mail stays, and
// the import keeps it removed (docs/emails.md §Mailboxes).
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';
import * as repo from './repository.ts';

const PAGE = 500;

export async function* mailboxLines(ctx: Ctx): AsyncGenerator<Record<string, unknown>> {
  for await (const rows of keysetPages((after) => repo.mailboxesPage(ctx.db, ctx.actor.workspaceId, after, PAGE))) {
    for (const m of rows)
      yield {
        object: 'mailbox',
        externalId: m.external_id ?? m.id,
        user: m.owner,
        address: m.address,
        othersSee: m.others_see,
        ...(m.removed_at !== null ? { removedAt: m.removed_at } : {}),
      };
  }
}
