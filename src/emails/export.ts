// `rolodex export` of a workspace's e-mails (docs/import.md §Export), as `email` import lines,
// paged by keyset. Every e-mail the API lists is written, received and sent alike; the import
// loads each as mail that is never delivered, so an import of an export sends nothing. Delivery
// state and drafts are not written (docs/emails.md §Import); attachments are written only when the
// export writes the files (`files`), named as the `file` lines name them. An e-mail without an
// externalId (one sent through the API) is written under its server id, and its mailbox is named
// as the `mailbox` lines name it.
import { type FileNames, namedLinks } from '../files/export.ts';
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';
import * as repo from './repository.ts';

const PAGE = 500;

const addresses = (json: string) => ({ value: JSON.parse(json) as string[], valueType: 'EMAIL' });

export async function* emailLines(ctx: Ctx, files?: FileNames): AsyncGenerator<Record<string, unknown>> {
  for await (const rows of keysetPages((after) => repo.emailsPage(ctx.db, ctx.actor.workspaceId, after, PAGE))) {
    const attached = await namedLinks(files, () =>
      repo.filesOf(
        ctx.db,
        rows.map((e) => e.id),
      ),
    );
    for (const e of rows) {
      const values = attached.get(e.id) ?? [];
      // A TEXT body keeps its text, from which the import makes the same escaped HTML.
      const body = e.text !== null ? { value: e.text, valueType: 'TEXT' } : e.html !== null ? { value: e.html, valueType: 'HTML' } : undefined;
      yield {
        object: 'email',
        externalId: e.external_id ?? e.id,
        mailbox: e.mailbox,
        fields: {
          ...(e.subject !== null ? { $subject: { value: e.subject, valueType: 'TEXT' } } : {}),
          ...(body ? { $body: body } : {}),
          $sentAt: { value: e.sent_at, valueType: 'DATETIME' },
          $from: { value: e.from_address, valueType: 'EMAIL' },
          $to: addresses(e.to_json),
          $cc: addresses(e.cc_json),
          $bcc: addresses(e.bcc_json),
        },
        ...(values.length > 0 ? { relationships: { $attachment: { objectType: 'file', values } } } : {}),
      };
    }
  }
}
