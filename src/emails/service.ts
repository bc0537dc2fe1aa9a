// E-mails (docs/emails.md): reading them as a given caller, sending and drafting. Send writes the
// e-mail and its outbox row in the request's transaction and answers at once; the dispatcher
// (src/jobs/mail-dispatcher.ts) delivers after commit. A METADATA reader never gets the subject,
// the body or the attachments, and neither the body nor the attachments are even read for one.
import type { Static } from '@sinclair/typebox';
import { findFile } from '../files/repository.ts';
import { checkDownload } from '../files/service.ts';
import { effectiveStatus } from '../files/rules.ts';
import { appendEvent } from '../changes/service.ts';
import { blank } from '../lib/chars.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { envelope, type Page } from '../lib/paging.ts';
import { findOwnMailbox, type MailboxRow } from '../mailboxes/repository.ts';
import { contactsOf } from './contacts.ts';
import { enqueue } from './outbox-repository.ts';
import * as repo from './repository.ts';
import { MAX_ADDRESSES, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_TOTAL_BYTES } from './limits.ts';
import type { DraftEmailBody, SendEmailBody } from './schemas.ts';

export type SendEmailInput = Static<typeof SendEmailBody>;
export type DraftEmailInput = Static<typeof DraftEmailBody>;
type MessageBody = NonNullable<DraftEmailInput['messageBody']>;

const parse = (json: string) => JSON.parse(json) as string[];

/** Every address of an e-mail, for its contacts. */
function addressesOf(r: repo.EmailRow): string[] {
  return [r.from_address, ...parse(r.to_json), ...parse(r.cc_json), ...parse(r.bcc_json)];
}

async function toResources(ctx: Ctx, rows: repo.EmailRow[]) {
  const full = rows.filter((r) => r.access === 'FULL').map((r) => r.id);
  // Independent reads: on PostgreSQL they run on two pooled connections at once.
  const [files, contacts] = await Promise.all([repo.filesOf(ctx.db, full), contactsOf(ctx.db, ctx.actor.workspaceId, rows.map(addressesOf))]);
  return rows.map((r, i) => toResource(ctx, r, { files: files.get(r.id) ?? [], contacts: contacts[i] ?? [] }));
}

export function toResource(ctx: Ctx, r: repo.EmailRow, links: { files: string[]; contacts: string[] }) {
  const full = r.access === 'FULL';
  return {
    id: r.id,
    objectType: 'email' as const,
    accessLevel: r.access,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    httpLink: ctx.links.http('emails', r.id),
    externalId: r.external_id,
    fields: {
      $subject: { value: full ? r.subject : null, valueType: 'TEXT' as const },
      $sentAt: { value: r.sent_at, valueType: 'DATETIME' as const },
      $from: { value: r.from_address, valueType: 'EMAIL' as const },
      $to: { value: parse(r.to_json), valueType: 'EMAIL' as const },
      $cc: { value: parse(r.cc_json), valueType: 'EMAIL' as const },
      $bcc: { value: parse(r.bcc_json), valueType: 'EMAIL' as const },
    },
    relationships: {
      $contact: { cardinality: 'has_many' as const, objectType: 'contact' as const, values: links.contacts },
      // At METADATA the attachments are withheld by leaving the key out (docs/emails.md §Who reads what).
      ...(full ? { $attachment: { cardinality: 'has_many' as const, objectType: 'file' as const, values: links.files } } : {}),
      $owner: { cardinality: 'has_one' as const, objectType: 'member' as const, values: [r.owner_id] },
    },
  };
}

export async function listEmails(ctx: Ctx, input: Page) {
  const { total, rows } = await repo.pageEmails(ctx.db, ctx.actor, input);
  return envelope(await toResources(ctx, rows), total);
}

export async function getEmail(ctx: Ctx, input: { id: string }) {
  const row = await repo.findEmail(ctx.db, ctx.actor, input.id);
  if (!row) throw notFound('email', input.id);
  // The body is read only for a FULL reader, alongside the other look-ups.
  const [items, html] = await Promise.all([toResources(ctx, [row]), row.access === 'FULL' ? repo.bodyOf(ctx.db, row.id) : null]);
  const item = items[0] as ReturnType<typeof toResource>;
  return { ...item, fields: { ...item.fields, $body: { value: html, valueType: 'HTML' as const } } };
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The HTML of a TEXT body: escaped, each line break kept as <br> (docs/emails.md). */
export function textToHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch] as string).replace(/\r\n|\r|\n/g, '<br>\n');
}

function bodyOf(b: MessageBody): { html: string; text: string | null } {
  return b.contentType === 'TEXT' ? { html: textToHtml(b.content), text: b.content } : { html: b.content, text: null };
}

/** Sending and drafting are a user's: a workspace key owns no mailbox. */
function requireUser(ctx: Ctx): string {
  if (ctx.actor.subjectType !== 'user' || ctx.actor.userId === null) {
    throw new AppError('user_required', "E-mail is sent from a mailbox of a user: use that user's API key, not a workspace key.");
  }
  return ctx.actor.userId;
}

async function ownMailbox(ctx: Ctx, userId: string, from: string): Promise<MailboxRow> {
  const mailbox = await findOwnMailbox(ctx.db, ctx.actor.workspaceId, userId, from.toLowerCase());
  if (!mailbox) throw new AppError('unknown_mailbox', '"from" is not the address of a mailbox of yours.', { param: 'from' });
  return mailbox;
}

type Recipients = { to: string[]; cc: string[]; bcc: string[] };

/** The recipients as lists: one address given as a string is a list of one (docs/emails.md §Sending). */
function recipientsOf(input: { to?: string[] | string | undefined; cc?: string[] | string | undefined; bcc?: string[] | string | undefined }): Recipients {
  const list = (v: string[] | string | undefined) => (v === undefined ? [] : typeof v === 'string' ? [v] : v);
  return { to: list(input.to), cc: list(input.cc), bcc: list(input.bcc) };
}

/** At most MAX_ADDRESSES recipients across to, cc and bcc; `param` names the first one over. */
function checkRecipients(input: Recipients): void {
  let n = 0;
  for (const list of ['to', 'cc', 'bcc'] as const) {
    const addresses = input[list];
    if (n + addresses.length > MAX_ADDRESSES)
      throw new AppError('invalid_value', `An e-mail has at most ${MAX_ADDRESSES} recipients across to, cc and bcc.`, {
        param: `${list}[${MAX_ADDRESSES - n}]`,
      });
    n += addresses.length;
  }
}

/**
 * A send's subject is required text: white space and invisible characters alone are as good as
 * none, as for a record's required text (docs/records.md §Writing fields). Checked with the body's shape.
 */
function checkSubject(subject: string): void {
  if (blank(subject)) throw new AppError('invalid_value', '"subject" is required and cannot be blank.', { param: 'subject' });
}

const bytes = (n: number) => n.toLocaleString('en-US');

/**
 * Each attachment must be a COMPLETED file of the workspace of at most 20 MiB whose bytes the
 * caller may have, and together they hold at most 25 MiB; duplicates collapse and count once.
 */
async function checkAttachments(ctx: Ctx, ids: string[]): Promise<string[]> {
  const out: string[] = [];
  let total = 0;
  for (const [i, id] of ids.entries()) {
    if (out.includes(id)) continue;
    const param = `attachments[${i}]`;
    const file = await findFile(ctx.db, ctx.actor.workspaceId, id);
    if (!file) throw new AppError('referenced_resource_missing', `No file with id "${id}" exists.`, { param });
    const status = effectiveStatus(file, ctx.now);
    if (status !== 'COMPLETED') throw new AppError('invalid_value', `The file "${id}" is ${status}; only a COMPLETED file can be attached.`, { param });
    if (Number(file.size_bytes) > MAX_ATTACHMENT_BYTES)
      throw new AppError('file_too_large', `The file "${id}" has ${file.size_bytes} bytes; an attachment may have at most ${MAX_ATTACHMENT_BYTES}.`, { param });
    // Sending bytes is handing them out, and the sender reads its own e-mail at FULL
    // (docs/files.md §Who downloads the bytes).
    await checkDownload(ctx, id, param);
    total += Number(file.size_bytes);
    out.push(id);
  }
  if (total > MAX_ATTACHMENTS_TOTAL_BYTES)
    throw new AppError(
      'invalid_value',
      `The attachments hold ${bytes(total)} bytes together; an e-mail may carry at most ${bytes(MAX_ATTACHMENTS_TOTAL_BYTES)} bytes (25 MiB) of attachments.`,
      { param: 'attachments' },
    );
  return out;
}

export async function sendEmail(ctx: WriteCtx, input: SendEmailInput) {
  checkSubject(input.subject);
  const userId = requireUser(ctx);
  const recipients = recipientsOf(input);
  checkRecipients(recipients);
  const mailbox = await ownMailbox(ctx, userId, input.from);
  const files = await checkAttachments(ctx, input.attachments ?? []);
  const at = isoNow(ctx.now);
  const id = newId('eml', ctx.now);
  const ws = ctx.actor.workspaceId;
  await repo.insertEmails(ctx.db, ws, [
    {
      id,
      workspace_id: ws,
      mailbox_id: mailbox.id,
      external_id: null,
      from_address: input.from,
      to_json: JSON.stringify(recipients.to),
      cc_json: JSON.stringify(recipients.cc),
      bcc_json: JSON.stringify(recipients.bcc),
      subject: input.subject,
      sent_at: at,
      created_at: at,
      updated_at: at,
      delivery_status: 'queued',
      delivery_attempts: 0,
      delivered_at: null,
      delivery_error: null,
      body: bodyOf(input.messageBody),
      files,
    },
  ]);
  await enqueue(ctx.db, { email_id: id, workspace_id: ws, attempts: 0, next_attempt_at: at, lease_owner: null, last_error: null, created_at: at });
  // The sender owns the mailbox, so it reads the e-mail in FULL, as a full-access key does.
  await appendEvent(ctx, { type: 'email.sent', object: await getEmail(ctx, { id }) });
  return { sentAt: at };
}

export async function draftEmail(ctx: WriteCtx, input: DraftEmailInput) {
  const userId = requireUser(ctx);
  const recipients = recipientsOf(input);
  const filled =
    [recipients.to, recipients.cc, recipients.bcc, input.attachments ?? []].some((a) => a.length > 0) ||
    Boolean(input.subject) ||
    Boolean(input.messageBody?.content);
  if (!filled) throw new AppError('parameter_missing', 'A draft needs at least one of to, cc, bcc, subject, messageBody or attachments besides from.');
  checkRecipients(recipients);
  const mailbox = await ownMailbox(ctx, userId, input.from);
  const files = await checkAttachments(ctx, input.attachments ?? []);
  const at = isoNow(ctx.now);
  const body = input.messageBody ? bodyOf(input.messageBody) : null;
  await repo.insertDraft(ctx.db, {
    id: newId('eml', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    mailbox_id: mailbox.id,
    to_json: JSON.stringify(recipients.to),
    cc_json: JSON.stringify(recipients.cc),
    bcc_json: JSON.stringify(recipients.bcc),
    subject: input.subject ?? null,
    body_html: body?.html ?? null,
    body_text: body?.text ?? null,
    attachments_json: JSON.stringify(files),
    drafted_at: at,
  });
  return { draftedAt: at };
}
