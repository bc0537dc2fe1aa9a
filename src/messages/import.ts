// The `message` import kind (docs/design.md §Import format): `channel` (externalId), `fields`
// shaped as in the API ({value, valueType}) and optional `relationships.$files` (file externalIds).
// Error messages name the field and never repeat a value: message text must not reach any output.
import { bumpMessageCounts, findChannel } from '../channels/repository.ts';
import { type ImportItem, type ImportKind, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { fileRelationship, optionalText as text, typedField } from '../import/checks.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import type { Visibility } from '../channels/tables.ts';
import * as repo from './repository.ts';
import type { TextType } from './tables.ts';

export interface MessageInput {
  channel: string;
  text: string;
  textType: TextType;
  sentAt: string;
  editedAt: string | null;
  provider: string | null;
  providerThreadId: string | null;
  files: string[] | null;
}

const FIELD_TYPES: Record<string, readonly string[]> = {
  $text: ['TEXT', 'HTML'],
  $sentAt: ['DATETIME'],
  $editedAt: ['DATETIME'],
  $provider: ['TEXT'],
  $providerThreadId: ['TEXT'],
};

function datetime(where: string, v: unknown, required: boolean): string | null {
  if (v === undefined || v === null) {
    if (required) throw new InputError('is required', where);
    return null;
  }
  // The API's rule (docs/errors.md §Dates): a time zone, and a real date and time, never reshaped.
  const ms = typeof v === 'string' ? parseIsoDateTime(v) : NaN;
  if (Number.isNaN(ms))
    throw new InputError('must be an ISO 8601 date-time with a time zone, of a real date and time, such as 2026-03-01T12:00:00.000Z', where);
  return new Date(ms).toISOString();
}

/**
 * `$provider`: null (the channel's provider), else a name held to the rule of a channel's provider
 * (docs/messages.md §Import): 1 to 255 characters once trimmed.
 */
function provider(v: unknown): string | null {
  const where = 'fields.$provider.value';
  const s = text(where, v, 255)?.trim() ?? null;
  if (s === '') throw new InputError("must name the chat provider (1 to 255 characters), or be null for the channel's", where);
  return s;
}

export function checkMessage(raw: Record<string, unknown>): MessageInput {
  onlyFields(raw, ['channel', 'fields', 'relationships']);
  const channel = str(raw, 'channel', { required: true, max: 255 }) as string;
  const fields = raw.fields;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new InputError('must be an object', 'fields');
  const f = fields as Record<string, unknown>;
  for (const k of Object.keys(f)) if (!Object.hasOwn(FIELD_TYPES, k)) throw new InputError('is not a message field', `fields.${k}`);
  const fieldValue = (name: string) => typedField(f, FIELD_TYPES, name);
  const t = fieldValue('$text');
  const body = text('fields.$text.value', t?.value, 1_000_000);
  if (body === null) throw new InputError('is required (a string)', 'fields.$text.value');
  return {
    channel,
    text: body,
    textType: (t?.valueType ?? 'TEXT') as TextType,
    sentAt: datetime('fields.$sentAt.value', fieldValue('$sentAt')?.value, true) as string,
    editedAt: datetime('fields.$editedAt.value', fieldValue('$editedAt')?.value, false),
    provider: provider(fieldValue('$provider')?.value),
    providerThreadId: text('fields.$providerThreadId.value', fieldValue('$providerThreadId')?.value, 255),
    files: fileRelationship(raw, '$files', 'messages'),
  };
}

export const messageKind: ImportKind<MessageInput> = {
  object: 'message',
  check: checkMessage,
  references: (_ctx, { value }) => [
    { object: 'channel', externalId: value.channel, field: 'channel' },
    ...(value.files ?? []).map((externalId, i) => ({ object: 'file', externalId, field: `relationships.$files.values[${i}]` })),
  ],
  async lookup(ctx, externalIds) {
    return new Map([...(await repo.messagesByExternalId(ctx.db, ctx.actor.workspaceId, externalIds))].map(([k, v]) => [k, v.id]));
  },
  async upsert(ctx, items) {
    const workspaceId = ctx.actor.workspaceId;
    // Before any row is written: the ranked index of the workspace's messages is kept with them.
    await repo.lockMessages(ctx.db, workspaceId);
    const channels = new Map<string, { id: string; provider: string; visibility: Visibility }>();
    const delta = new Map<string, number>();
    const bump = (id: string, n: number) => delta.set(id, (delta.get(id) ?? 0) + n);
    const at = isoNow(ctx.now);
    const fresh: repo.NewMessageRow[] = [];
    const ranked: { added: repo.StoredMessage[]; removed: repo.StoredMessage[] } = { added: [], removed: [] };
    // The columns of an item's row, and its channel (read once per channel).
    const valuesOf = async ({ line, value: v }: ImportItem<MessageInput>) => {
      let channel = channels.get(v.channel);
      if (!channel) {
        const id = await ctx.resolve('channel', v.channel, { line, field: 'channel' });
        channel = { id, ...(await findChannel(ctx.db, id)) };
        channels.set(v.channel, channel);
      }
      bump(channel.id, 1);
      return {
        channel_id: channel.id,
        channel_visibility: channel.visibility,
        sent_at: v.sentAt,
        edited_at: v.editedAt,
        provider: v.provider ?? channel.provider,
        provider_thread_id: v.providerThreadId,
        text_type: v.textType,
        updated_at: at,
      };
    };
    await upsertByExternalId(ctx, items, {
      object: 'message',
      idKind: 'msg',
      find: (externalIds) => repo.storedMessagesByExternalId(ctx.db, workspaceId, externalIds),
      async update(item, old) {
        const values = await valuesOf(item);
        bump(old.channel_id, -1);
        // A line that changes nothing writes nothing and leaves updatedAt alone (docs/messages.md §Import).
        const same = (Object.keys(values) as Array<keyof typeof values>).every((k) => k === 'updated_at' || old[k] === values[k]);
        if (same && old.text === item.value.text) return;
        await repo.updateMessage(ctx.db, old.id, values, item.value.text);
        const now = { ...old, ...values };
        const [a, b] = [repo.rankKey(old), repo.rankKey(now)];
        if (a.ts !== b.ts || a.part !== b.part) {
          ranked.removed.push(old);
          ranked.added.push(now);
        }
      },
      async insert(item, id) {
        fresh.push({ ...(await valuesOf(item)), id, workspace_id: workspaceId, external_id: item.externalId, created_at: at, text: item.value.text });
      },
    });
    await repo.insertMessages(ctx.db, fresh);
    ranked.added.push(...fresh);
    await repo.rankMessages(ctx.db, workspaceId, ranked);
    await bumpMessageCounts(ctx.db, delta);
  },
  async link(ctx, items) {
    const wanted = new Map<string, string[]>();
    for (const item of items) {
      // A line that names no $files keeps the message's: an export without --files writes none
      // (docs/messages.md §Import), and imported into its own workspace it changes nothing.
      if (item.value.files === null) continue;
      const id = await ctx.resolve('message', item.externalId, { line: item.line, field: 'externalId' });
      const files: string[] = [];
      for (const [i, ext] of item.value.files.entries()) {
        files.push(await ctx.resolve('file', ext, { line: item.line, field: `relationships.$files.values[${i}]` }));
      }
      wanted.set(id, files);
    }
    await repo.replaceMessageFiles(ctx.db, wanted, isoNow(ctx.now));
  },
};
