// The `email` import kind (docs/emails.md §Import): received (or earlier) mail of a mailbox.
// `mailbox` (externalId), `fields` shaped as in the API ({value, valueType}) and optional
// `relationships.$attachment` (file externalIds). Imported mail is never delivered. Error messages
// name the field and never repeat a value: subjects and bodies must not reach any output.
import { type ImportItem, type ImportKind, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { fileRelationship, optionalText as text, typedField } from '../import/checks.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import { checkAddress } from '../mailboxes/service.ts';
import * as repo from './repository.ts';
import { textToHtml } from './service.ts';
import { MAX_ADDRESSES, MAX_BODY, MAX_SUBJECT } from './limits.ts';

export interface EmailInput {
  mailbox: string;
  subject: string | null;
  html: string;
  text: string | null;
  sentAt: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  /** File externalIds; null when the line names no `$attachment`, which keeps the e-mail's. */
  attachments: string[] | null;
}

const FIELD_TYPES: Record<string, readonly string[]> = {
  $subject: ['TEXT'],
  $body: ['HTML', 'TEXT'],
  $sentAt: ['DATETIME'],
  $from: ['EMAIL'],
  $to: ['EMAIL'],
  $cc: ['EMAIL'],
  $bcc: ['EMAIL'],
};

function addresses(where: string, v: unknown): string[] {
  if (v === undefined || v === null) return [];
  // A multi-valued EMAIL field: one address is a list of one, as a send takes it (docs/emails.md §Import).
  if (typeof v === 'string') {
    checkAddress(v, where);
    return [v];
  }
  if (!Array.isArray(v)) throw new InputError('must be an e-mail address or an array of them', where);
  if (v.length > MAX_ADDRESSES) throw new InputError(`must hold at most ${MAX_ADDRESSES} addresses`, where);
  return v.map((a, i) => {
    checkAddress(a, `${where}[${i}]`);
    return a as string;
  });
}

function sentAt(v: unknown): string {
  const where = 'fields.$sentAt.value';
  // The API's rule (docs/errors.md §Dates): a time zone, and a real date and time, never reshaped.
  const ms = typeof v === 'string' ? parseIsoDateTime(v) : NaN;
  if (Number.isNaN(ms))
    throw new InputError('is required: an ISO 8601 date-time with a time zone, of a real date and time, such as 2026-03-01T12:00:00.000Z', where);
  return new Date(ms).toISOString();
}

export function checkEmail(raw: Record<string, unknown>): EmailInput {
  onlyFields(raw, ['mailbox', 'fields', 'relationships']);
  const mailbox = str(raw, 'mailbox', { required: true, max: 255 }) as string;
  const fields = raw.fields;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new InputError('must be an object', 'fields');
  const f = fields as Record<string, unknown>;
  for (const k of Object.keys(f)) if (!Object.hasOwn(FIELD_TYPES, k)) throw new InputError('is not an e-mail field', `fields.${k}`);
  const fieldOf = (name: string) => typedField(f, FIELD_TYPES, name);
  const body = fieldOf('$body');
  const content = text('fields.$body.value', body?.value, MAX_BODY) ?? '';
  const from = fieldOf('$from')?.value;
  if (from === undefined || from === null) throw new InputError('is required', 'fields.$from.value');
  checkAddress(from, 'fields.$from.value');
  return {
    mailbox,
    subject: text('fields.$subject.value', fieldOf('$subject')?.value, MAX_SUBJECT),
    ...(body?.valueType === 'TEXT' ? { html: textToHtml(content), text: content } : { html: content, text: null }),
    sentAt: sentAt(fieldOf('$sentAt')?.value),
    from: from as string,
    to: addresses('fields.$to.value', fieldOf('$to')?.value),
    cc: addresses('fields.$cc.value', fieldOf('$cc')?.value),
    bcc: addresses('fields.$bcc.value', fieldOf('$bcc')?.value),
    attachments: fileRelationship(raw, '$attachment', 'e-mails'),
  };
}

export const emailKind: ImportKind<EmailInput> = {
  object: 'email',
  check: checkEmail,
  references: (_ctx, { value }) => [
    { object: 'mailbox', externalId: value.mailbox, field: 'mailbox' },
    ...(value.attachments ?? []).map((externalId, i) => ({ object: 'file', externalId, field: `relationships.$attachment.values[${i}]` })),
  ],
  async lookup(ctx, externalIds) {
    return new Map([...(await repo.emailsByExternalId(ctx.db, ctx.actor.workspaceId, externalIds))].map(([k, v]) => [k, v.id]));
  },
  async upsert(ctx, items) {
    const at = isoNow(ctx.now);
    const ws = ctx.actor.workspaceId;
    const fresh: repo.NewEmail[] = [];
    const columns = async ({ line, value: v }: ImportItem<EmailInput>) => ({
      mailbox_id: await ctx.resolve('mailbox', v.mailbox, { line, field: 'mailbox' }),
      from_address: v.from,
      to_json: JSON.stringify(v.to),
      cc_json: JSON.stringify(v.cc),
      bcc_json: JSON.stringify(v.bcc),
      subject: v.subject,
      sent_at: v.sentAt,
      updated_at: at,
    });
    await upsertByExternalId(ctx, items, {
      object: 'email',
      idKind: 'eml',
      find: (externalIds) => repo.storedEmailsByExternalId(ctx.db, ws, externalIds),
      async update(item, old) {
        const set = await columns(item);
        const body = { html: item.value.html, text: item.value.text };
        // A line that changes nothing writes nothing and leaves updatedAt alone (docs/emails.md §Import).
        const same = (Object.keys(set) as Array<keyof typeof set>).every((k) => k === 'updated_at' || old[k] === set[k]);
        if (same && old.html === body.html && old.text === body.text) return;
        await repo.updateEmail(ctx.db, ws, old.id, old.sentAt, set, body);
      },
      async insert(item, id) {
        fresh.push({
          id,
          workspace_id: ws,
          external_id: item.externalId,
          ...(await columns(item)),
          created_at: at,
          delivery_status: null,
          delivery_attempts: 0,
          delivered_at: null,
          delivery_error: null,
          body: { html: item.value.html, text: item.value.text },
          files: [],
        });
      },
    });
    await repo.insertEmails(ctx.db, ws, fresh);
  },
  async link(ctx, items) {
    const at = isoNow(ctx.now);
    for (const item of items) {
      // A line that names no $attachment keeps the e-mail's: an export without --files writes none
      // (docs/emails.md §Import), and imported into its own workspace it changes nothing.
      if (item.value.attachments === null) continue;
      const id = await ctx.resolve('email', item.externalId, { line: item.line, field: 'externalId' });
      const files: string[] = [];
      for (const [i, ext] of item.value.attachments.entries()) {
        files.push(await ctx.resolve('file', ext, { line: item.line, field: `relationships.$attachment.values[${i}]` }));
      }
      await repo.replaceEmailFiles(ctx.db, id, files, at);
    }
  },
};
