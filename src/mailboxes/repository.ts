// SQL of mailboxes. Addresses are stored lower-cased; a removed mailbox keeps its row (its mail
// still resolves its owner and visibility through it) and frees its address.
import { isUniqueViolation, type Executor } from '../db/index.ts';
import type { MailboxesTable } from './tables.ts';
import { byName, named } from '../import/repository.ts';

export type MailboxRow = MailboxesTable;

/** False when a live mailbox of the workspace has this address already. */
export async function insertMailbox(db: Executor, row: MailboxRow): Promise<boolean> {
  try {
    // The partial unique index decides, so two operators adding one address at once cannot both succeed.
    await db.insertInto('mailboxes').values(row).execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/** False when the new address is another live mailbox's. */
export async function updateMailbox(db: Executor, id: string, set: Partial<Omit<MailboxRow, 'id' | 'workspace_id'>>): Promise<boolean> {
  try {
    await db.updateTable('mailboxes').set(set).where('id', '=', id).execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/** The caller's live mailbox with this (lower-cased) address. */
export async function findOwnMailbox(db: Executor, workspaceId: string, userId: string, address: string): Promise<MailboxRow | undefined> {
  return db
    .selectFrom('mailboxes')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('address', '=', address)
    .where('removed_at', 'is', null)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function findMailbox(db: Executor, id: string): Promise<MailboxRow | undefined> {
  return db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Live mailboxes, oldest first. */
export async function listMailboxes(db: Executor, workspaceId: string): Promise<MailboxRow[]> {
  return db
    .selectFrom('mailboxes')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('removed_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function markRemoved(db: Executor, id: string, at: string): Promise<boolean> {
  const r = await db.updateTable('mailboxes').set({ removed_at: at, updated_at: at }).where('id', '=', id).where('removed_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Mailboxes by name (docs/import.md §Export), removed ones too (a re-import brings one back). */
export async function mailboxesByExternalId(db: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, string>> {
  const rows = await byName(externalIds, (part, by) =>
    db.selectFrom('mailboxes').select(['id', 'external_id']).where('workspace_id', '=', workspaceId).where(named(by, part)).execute(),
  );
  return new Map([...rows].map(([name, r]) => [name, r.id]));
}

/** A page of the workspace's mailboxes, removed ones too, by id after `after`, with the owner's externalId (else id). */
export async function mailboxesPage(db: Executor, workspaceId: string, after: string, limit: number): Promise<(MailboxRow & { owner: string })[]> {
  return db
    .selectFrom('mailboxes as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .selectAll('m')
    .select((eb) => eb.fn.coalesce('u.external_id', 'u.id').as('owner'))
    .where('m.workspace_id', '=', workspaceId)
    .where('m.id', '>', after)
    .orderBy('m.id')
    .limit(limit)
    .execute();
}
