// SQL of e-mails. Access is resolved in the SQL (docs/emails.md §Who reads what): the mailbox's
// owner reads FULL, everyone else the mailbox's `others_see`; the subject leaves the database only
// for a FULL row, and the body is read by a query of its own, asked only for a FULL row. A workspace's e-mails are a ranked set
// (docs/pages.md), so a page at any offset costs what the first does.
import { type RawBuilder, sql } from 'kysely';
import { chunks, defineRank, lockPartition, rankDelete, rankInsert, rankPage, type Executor, type Tx } from '../db/index.ts';
import type { Page } from '../lib/paging.ts';
import type { EmailBodiesTable, EmailDraftsTable, EmailsTable } from './tables.ts';
import { byName, named } from '../import/repository.ts';

/** A workspace's e-mails, newest $sentAt first, ties by id. */
export const EMAILS = defineRank({ name: 'emails', table: 'emails', by: ['workspace_id'], ts: 'sent_at', id: 'id' });

export interface Caller {
  workspaceId: string;
  /** null for a workspace key: it owns no mailbox. */
  userId: string | null;
}

export type AccessLevel = 'FULL' | 'METADATA';

/** An e-mail as a caller reads it. */
export interface EmailRow extends Pick<
  EmailsTable,
  'id' | 'external_id' | 'from_address' | 'to_json' | 'cc_json' | 'bcc_json' | 'sent_at' | 'created_at' | 'updated_at'
> {
  owner_id: string;
  access: AccessLevel;
  /** null unless access is FULL. */
  subject: string | null;
}

/**
 * SQL: the caller's access level to the mail of the mailbox of alias `m` (docs/emails.md §Who reads
 * what): FULL for its owner, `others_see` for every other user key and for a workspace key. Every
 * read of e-mails resolves it here, and so does the download rule of their attachments (src/files/).
 */
export function access(c: Caller, m = 'm'): RawBuilder<AccessLevel> {
  const othersSee = sql.ref(`${m}.others_see`);
  if (c.userId === null) return sql<AccessLevel>`${othersSee}`;
  return sql<AccessLevel>`case when ${sql.ref(`${m}.user_id`)} = ${c.userId} then 'FULL' else ${othersSee} end`;
}

function select(c: Caller, where: RawBuilder<unknown>): RawBuilder<EmailRow> {
  const level = access(c);
  return sql<EmailRow>`
    select e.id, e.external_id, m.user_id as owner_id, e.from_address, e.to_json, e.cc_json, e.bcc_json, e.sent_at,
      e.created_at, e.updated_at, ${level} as access, case when ${level} = 'FULL' then e.subject end as subject
    from emails e
    join mailboxes m on m.id = e.mailbox_id
    where e.workspace_id = ${c.workspaceId} and ${where}`;
}

/** The page's rows newest first, and the workspace's e-mail count from the same snapshot. */
export async function pageEmails(db: Executor, c: Caller, page: Page): Promise<{ total: number; rows: EmailRow[] }> {
  const { total, rows: keys } = await rankPage(db, EMAILS, [c.workspaceId], page);
  if (keys.length === 0) return { total, rows: [] };
  const ids = keys.map((k) => k.id);
  const found = (await select(c, sql`e.id in (${sql.join(ids)})`).execute(db)).rows;
  const byId = new Map(found.map((r) => [r.id, r]));
  // An e-mail re-imported with another $sentAt between the two reads keeps its place on this page.
  return { total, rows: ids.flatMap((id) => byId.get(id) ?? []) };
}

export async function findEmail(db: Executor, c: Caller, id: string): Promise<EmailRow | undefined> {
  return (await select(c, sql`e.id = ${id}`).execute(db)).rows[0];
}

/** `$body` of an e-mail; ask only for one read at FULL. */
export async function bodyOf(db: Executor, emailId: string): Promise<string | null> {
  return (await db.selectFrom('email_bodies').select('html').where('email_id', '=', emailId).executeTakeFirst())?.html ?? null;
}

/** File ids attached to these e-mails, in order; ask only for e-mails read at FULL. */
export async function filesOf(db: Executor, emailIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (emailIds.length === 0) return out;
  const rows = await db
    .selectFrom('email_files')
    .select(['email_id', 'file_id'])
    .where('email_id', 'in', emailIds)
    .orderBy('email_id')
    .orderBy('position')
    .execute();
  for (const r of rows) out.set(r.email_id, [...(out.get(r.email_id) ?? []), r.file_id]);
  return out;
}

export type NewEmail = EmailsTable & { body: Omit<EmailBodiesTable, 'email_id'>; files: string[] };

/** Inserts e-mails of one workspace with their bodies and files, and ranks them. */
export async function insertEmails(tx: Tx, workspaceId: string, emails: NewEmail[]): Promise<void> {
  if (emails.length === 0) return;
  await lockPartition(tx, EMAILS, [workspaceId]);
  for (const part of chunks(emails, 200)) {
    await tx
      .insertInto('emails')
      .values(part.map(({ body: _b, files: _f, ...row }) => row))
      .execute();
    await tx
      .insertInto('email_bodies')
      .values(part.map((e) => ({ email_id: e.id, ...e.body })))
      .execute();
  }
  const links = emails.flatMap((e) => e.files.map((file_id, position) => ({ email_id: e.id, file_id, position })));
  for (const part of chunks(links)) await tx.insertInto('email_files').values(part).execute();
  await rankInsert(
    tx,
    EMAILS,
    [workspaceId],
    emails.map((e) => ({ ts: e.sent_at, id: e.id })),
  );
}

/** Existing e-mails by name (docs/import.md §Export), with the $sentAt each is ranked under. */
export async function emailsByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, { id: string; sentAt: string }>> {
  const rows = await byName(externalIds, (part, by) =>
    db.selectFrom('emails').select(['id', 'external_id', 'sent_at']).where('workspace_id', '=', workspaceId).where(named(by, part)).execute(),
  );
  return new Map([...rows].map(([name, r]) => [name, { id: r.id, sentAt: r.sent_at }]));
}

export type EmailChanges = Pick<EmailsTable, 'mailbox_id' | 'from_address' | 'to_json' | 'cc_json' | 'bcc_json' | 'subject' | 'sent_at' | 'updated_at'>;

/** E-mails by name (docs/import.md §Export) with the columns a re-import writes and their bodies, as stored. */
export async function storedEmailsByExternalId(
  db: Executor,
  workspaceId: string,
  externalIds: string[],
): Promise<Map<string, EmailChanges & { id: string; sentAt: string; html: string | null; text: string | null }>> {
  const rows = await byName(externalIds, (part, by) =>
    db
      .selectFrom('emails as e')
      .leftJoin('email_bodies as b', 'b.email_id', 'e.id')
      .select(['e.id', 'e.external_id', 'e.mailbox_id', 'e.from_address', 'e.to_json', 'e.cc_json', 'e.bcc_json', 'e.subject', 'e.sent_at', 'e.updated_at'])
      .select(['b.html', 'b.text'])
      .where('e.workspace_id', '=', workspaceId)
      .where(named(by, part, 'e'))
      .execute(),
  );
  return new Map([...rows].map(([name, { external_id: _, ...r }]) => [name, { ...r, sentAt: r.sent_at }]));
}

/** Updates an imported e-mail; a new $sentAt moves it in the ranked order. */
export async function updateEmail(
  tx: Tx,
  workspaceId: string,
  id: string,
  oldSentAt: string,
  set: EmailChanges,
  body: Omit<EmailBodiesTable, 'email_id'>,
): Promise<void> {
  if (set.sent_at !== oldSentAt) await lockPartition(tx, EMAILS, [workspaceId]);
  await tx.updateTable('emails').set(set).where('id', '=', id).execute();
  await tx.updateTable('email_bodies').set(body).where('email_id', '=', id).execute();
  if (set.sent_at !== oldSentAt) {
    await rankDelete(tx, EMAILS, [workspaceId], [{ ts: oldSentAt, id }]);
    await rankInsert(tx, EMAILS, [workspaceId], [{ ts: set.sent_at, id }]);
  }
}

/**
 * Sets an e-mail's files, in order. Another list is a change of the e-mail: its `updated_at`
 * becomes `at`; the same list writes nothing.
 */
export async function replaceEmailFiles(tx: Executor, emailId: string, fileIds: string[], at: string): Promise<void> {
  const stored = await tx.selectFrom('email_files').select('file_id').where('email_id', '=', emailId).orderBy('position').execute();
  if (stored.length === fileIds.length && stored.every((r, i) => r.file_id === fileIds[i])) return;
  await tx.deleteFrom('email_files').where('email_id', '=', emailId).execute();
  if (fileIds.length > 0)
    await tx
      .insertInto('email_files')
      .values(fileIds.map((file_id, position) => ({ email_id: emailId, file_id, position })))
      .execute();
  await tx.updateTable('emails').set({ updated_at: at }).where('id', '=', emailId).execute();
}

export async function insertDraft(tx: Executor, row: EmailDraftsTable): Promise<void> {
  await tx.insertInto('email_drafts').values(row).execute();
}

/** An e-mail as an export writes it: its mailbox's externalId (else id) and its body. */
export type ExportedEmailRow = Pick<EmailsTable, 'id' | 'external_id' | 'from_address' | 'to_json' | 'cc_json' | 'bcc_json' | 'subject' | 'sent_at'> & {
  mailbox: string;
  html: string | null;
  text: string | null;
};

/** A page of the workspace's e-mails (sent and received; drafts are apart), by id after `after`. */
export async function emailsPage(db: Executor, workspaceId: string, after: string, limit: number): Promise<ExportedEmailRow[]> {
  return db
    .selectFrom('emails as e')
    .innerJoin('mailboxes as m', 'm.id', 'e.mailbox_id')
    .leftJoin('email_bodies as b', 'b.email_id', 'e.id')
    .select(['e.id', 'e.external_id', 'e.from_address', 'e.to_json', 'e.cc_json', 'e.bcc_json', 'e.subject', 'e.sent_at', 'b.html', 'b.text'])
    .select((eb) => eb.fn.coalesce('m.external_id', 'm.id').as('mailbox'))
    .where('e.workspace_id', '=', workspaceId)
    .where('e.id', '>', after)
    .orderBy('e.id')
    .limit(limit)
    .execute();
}
