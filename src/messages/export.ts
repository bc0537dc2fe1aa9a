// `rolodex export` of a workspace's messages (docs/import.md §Export), as `message` import lines,
// paged by keyset. A message names its channel as the `channel` lines do: the channel's
// externalId, else its server id; a message without an externalId is exported under its server
// id. Its `$files` are written only when the export writes the files (`files`), named as the
// `file` lines name them; without, a line has no `$files`, and the imported message has none.
import { type FileNames, namedLinks } from '../files/export.ts';
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';
import { filesOf, messagesAfter } from './repository.ts';

const PAGE = 500;

export async function* messageLines(ctx: Ctx, files?: FileNames): AsyncGenerator<Record<string, unknown>> {
  for await (const rows of keysetPages((after) => messagesAfter(ctx.db, ctx.actor.workspaceId, after, PAGE))) {
    const linked = await namedLinks(files, () =>
      filesOf(
        ctx.db,
        rows.map((m) => m.id),
      ),
    );
    for (const m of rows) {
      const values = linked.get(m.id) ?? [];
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
        ...(values.length > 0 ? { relationships: { $files: { objectType: 'file', values } } } : {}),
      };
    }
  }
}
