// The `message` import kind (docs/design.md §Import format): `channel` (externalId), `fields`
// shaped as in the API ({value, valueType}) and optional `relationships.$files` (file externalIds).
// Error messages name the field and never repeat a value: message text must not reach any output.
import { bumpMessageCounts, findChannel } from '../channels/repository.ts';
import { type ImportItem, type ImportKind, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
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

function fieldValue(fields: Record<string, unknown>, name: string): { value: unknown; valueType: string | undefined } | undefined {
  const f = fields[name];
  if (f === undefined) return undefined;
  const where = `fields.${name}`;
  if (typeof f !== 'object' || f === null || Array.isArray(f)) throw new InputError('must be an object {value, valueType}', where);
  const { value, valueType, ...rest } = f as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new InputError('is not a known field', `${where}.${extra}`);
  if (valueType !== undefined && !(FIELD_TYPES[name] as readonly string[]).includes(valueType as string)) {
    throw new InputError(`must be ${(FIELD_TYPES[name] as readonly string[]).join(' or ')}`, `${where}.valueType`);
  }
  return { value, valueType: valueType as string | undefined };
}

function datetime(where: string, v: unknown, required: boolean): string | null {
  if (v === undefined || v === null) {
    if (required) throw new InputError('is required', where);
    return null;
  }
  const ms = typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw new InputError('must be an ISO 8601 date-time such as 2026-03-01T12:00:00.000Z', where);
  return new Date(ms).toISOString();
}

function text(where: string, v: unknown, max: number): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new InputError('must be a string', where);
  if (v.length > max) throw new InputError(`must be at most ${max} characters`, where);
  return v;
}

function files(raw: Record<string, unknown>): string[] | null {
  const rels = raw.relationships;
  if (rels === undefined || rels === null) return null;
  if (typeof rels !== 'object' || Array.isArray(rels)) throw new InputError('must be an object', 'relationships');
  for (const k of Object.keys(rels)) if (k !== '$files') throw new InputError('is not a relationship of messages (only $files)', `relationships.${k}`);
  const f = (rels as Record<string, unknown>).$files;
  if (f === undefined) return null;
  if (typeof f !== 'object' || f === null || Array.isArray(f)) throw new InputError('must be an object {objectType, values}', 'relationships.$files');
  const { objectType, values, ...rest } = f as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new InputError('is not a known field', `relationships.$files.${extra}`);
  if (objectType !== undefined && objectType !== 'file') throw new InputError('must be "file"', 'relationships.$files.objectType');
  if (!Array.isArray(values)) throw new InputError('must be an array of file externalIds', 'relationships.$files.values');
  values.forEach((v, i) => {
    if (typeof v !== 'string' || v.length === 0) throw new InputError('must be a file externalId', `relationships.$files.values[${i}]`);
  });
  return [...new Set(values as string[])];
}

export function checkMessage(raw: Record<string, unknown>): MessageInput {
  onlyFields(raw, ['channel', 'fields', 'relationships']);
  const channel = str(raw, 'channel', { required: true, max: 255 }) as string;
  const fields = raw.fields;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new InputError('must be an object', 'fields');
  const f = fields as Record<string, unknown>;
  for (const k of Object.keys(f)) if (!(k in FIELD_TYPES)) throw new InputError('is not a message field', `fields.${k}`);
  const t = fieldValue(f, '$text');
  const body = text('fields.$text.value', t?.value, 1_000_000);
  if (body === null) throw new InputError('is required (a string)', 'fields.$text.value');
  return {
    channel,
    text: body,
    textType: (t?.valueType ?? 'TEXT') as TextType,
    sentAt: datetime('fields.$sentAt.value', fieldValue(f, '$sentAt')?.value, true) as string,
    editedAt: datetime('fields.$editedAt.value', fieldValue(f, '$editedAt')?.value, false),
    provider: text('fields.$provider.value', fieldValue(f, '$provider')?.value, 255),
    providerThreadId: text('fields.$providerThreadId.value', fieldValue(f, '$providerThreadId')?.value, 255),
    files: files(raw),
  };
}

export const messageKind: ImportKind<MessageInput> = {
  object: 'message',
  check: checkMessage,
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
      find: (externalIds) => repo.messagesByExternalId(ctx.db, workspaceId, externalIds),
      async update(item, old) {
        const values = await valuesOf(item);
        await repo.updateMessage(ctx.db, old.id, values, item.value.text);
        bump(old.channel_id, -1);
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
    for (const item of items) {
      const id = await ctx.resolve('message', item.externalId, { line: item.line, field: 'externalId' });
      const files: string[] = [];
      for (const [i, ext] of (item.value.files ?? []).entries()) {
        files.push(await ctx.resolve('file', ext, { line: item.line, field: `relationships.$files.values[${i}]` }));
      }
      await repo.replaceMessageFiles(ctx.db, id, files);
    }
  },
};
