// `rolodex export` of a workspace's messages (docs/import.md §Export), as `message` import lines,
// paged by keyset. A message names its channel as the `channel` lines do: the channel's
// externalId, else its server id; a message without an externalId is exported under its server
// id. Files are not exported, so a line has no `$files`, and the imported message has none.
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';
import { messagesAfter } from './repository.ts';

const PAGE = 500;

export async function* messageLines(ctx: Ctx): AsyncGenerator<Record<string, unknown>> {
  for await (const rows of keysetPages((after) => messagesAfter(ctx.db, ctx.actor.workspaceId, after, PAGE))) {
    for (const m of rows)
      yield {
        object: 'message',
        externalId: m.external_id ?? m.id,
        channel: m.channel,
        fields: {
          $text: { value: m.text, valueType: m.text_type },
          $sentAt: { value: m.sent_at, valueType: 'DATETIME' },
          $provider: { value: m.provider, valueType: 'TEXT' },
          $providerThreadId: { value: m.provider_thread_id, valueType: 'TEXT' },
          $editedAt: { value: m.edited_at, valueType: 'DATETIME' },
        },
      };
  }
}
