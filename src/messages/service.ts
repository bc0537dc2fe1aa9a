// Reading messages as a given caller (docs/design.md §Message visibility): what is invisible does
// not exist, METADATA withholds `$text` and `$files`. The text is never read from the database for
// a METADATA row.
import type { Ctx } from '../lib/context.ts';
import { notFound } from '../lib/errors.ts';
import { envelope, type Page } from '../lib/paging.ts';
import { filesOf, findOne, findPage, type MessageRow } from './repository.ts';

/** Newest first; totalCount is the number of messages the caller sees (docs/messages.md). */
export async function listMessages(ctx: Ctx, input: Page) {
  const { total, rows } = await findPage(ctx.db, ctx.actor, input);
  return envelope(await toResources(ctx, rows), total);
}

export async function getMessage(ctx: Ctx, input: { id: string }) {
  const row = await findOne(ctx.db, ctx.actor, input.id);
  if (!row) throw notFound('message', input.id);
  return (await toResources(ctx, [row]))[0];
}

async function toResources(ctx: Ctx, rows: MessageRow[]) {
  const files = await filesOf(
    ctx.db,
    rows.filter((r) => r.access === 'FULL').map((r) => r.id),
  );
  return rows.map((r) => toResource(ctx, r, r.access === 'FULL' ? (files.get(r.id) ?? []) : []));
}

export function toResource(ctx: Ctx, r: MessageRow, files: string[]) {
  const full = r.access === 'FULL';
  return {
    id: r.id,
    accessLevel: r.access,
    createdAt: r.created_at,
    fields: {
      $text: { value: full ? r.text : null, valueType: r.text_type },
      $sentAt: { value: r.sent_at, valueType: 'DATETIME' },
      $provider: { value: r.provider, valueType: 'TEXT' },
      $providerThreadId: { value: r.provider_thread_id, valueType: 'TEXT' },
      $editedAt: { value: r.edited_at, valueType: 'DATETIME' },
    },
    httpLink: ctx.links.http('messages', r.id),
    objectType: 'message' as const,
    relationships: {
      $channel: { cardinality: 'has_one' as const, objectType: 'channel', values: [r.channel_id] },
      $files: { cardinality: 'has_many' as const, objectType: 'file', values: files },
    },
    updatedAt: r.updated_at,
    externalId: r.external_id,
  };
}
