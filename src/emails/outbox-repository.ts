// SQL of the outbox (docs/emails.md §Delivery). A row is due once next_attempt_at has passed. A
// claim takes due rows under a token of its own and moves their next_attempt_at to the end of its
// lease; the claimant renews the lease while it delivers, and settles each row only while it still
// holds that token. A dispatcher that dies leaves its rows to come due again when the lease ends.
// On PostgreSQL concurrent claims skip each other's locked rows (FOR UPDATE SKIP LOCKED); SQLite
// has one writer at a time, so a claim is atomic there anyway.
import { sql } from 'kysely';
import { isPostgres } from '../db/rank-def.ts';
import type { Executor } from '../db/types.ts';
import type { DeliveryStatus, EmailOutboxTable } from './tables.ts';

export type OutboxRow = EmailOutboxTable;

export async function enqueue(tx: Executor, row: OutboxRow): Promise<void> {
  await tx.insertInto('email_outbox').values(row).execute();
}

/** Claims up to `limit` due rows for `token` until `leaseUntil`; `attempts` counts this one. */
export async function claimDue(db: Executor, input: { now: string; leaseUntil: string; token: string; limit: number }): Promise<OutboxRow[]> {
  // A read first: an idle outbox costs no write (on SQLite, no write lock every poll).
  const any = await db.selectFrom('email_outbox').select('email_id').where('next_attempt_at', '<=', input.now).limit(1).executeTakeFirst();
  if (!any) return [];
  let due = db.selectFrom('email_outbox').select('email_id').where('next_attempt_at', '<=', input.now).orderBy('next_attempt_at').limit(input.limit);
  if (isPostgres(db)) due = due.forUpdate().skipLocked();
  return db
    .updateTable('email_outbox')
    .set({ lease_owner: input.token, next_attempt_at: input.leaseUntil, attempts: sql<number>`attempts + 1` })
    .where('email_id', 'in', due)
    .returningAll()
    .execute();
}

/** Extends the lease of the rows `token` still holds. */
export async function renewLease(db: Executor, token: string, leaseUntil: string): Promise<void> {
  await db.updateTable('email_outbox').set({ next_attempt_at: leaseUntil }).where('lease_owner', '=', token).execute();
}

/** Gives back rows not yet tried (a dispatcher stopping): due at once, this attempt uncounted. */
export async function release(db: Executor, token: string, emailIds: string[], now: string): Promise<void> {
  if (emailIds.length === 0) return;
  await db
    .updateTable('email_outbox')
    .set({ lease_owner: null, next_attempt_at: now, attempts: sql<number>`attempts - 1` })
    .where('lease_owner', '=', token)
    .where('email_id', 'in', emailIds)
    .execute();
}

export interface Outcome {
  status: Extract<DeliveryStatus, 'sent' | 'logged' | 'failed'>;
  attempts: number;
  at: string;
  error: string | null;
}

/**
 * The final outcome: the row leaves the outbox and the e-mail records it, in one transaction. False
 * when `token` no longer holds the row (its lease ran out and another dispatcher took it).
 */
export async function settle(db: Executor, emailId: string, token: string, outcome: Outcome): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const gone = await tx.deleteFrom('email_outbox').where('email_id', '=', emailId).where('lease_owner', '=', token).executeTakeFirst();
    if (Number(gone.numDeletedRows) !== 1) return false;
    await tx
      .updateTable('emails')
      .set({
        delivery_status: outcome.status,
        delivery_attempts: outcome.attempts,
        delivered_at: outcome.status === 'failed' ? null : outcome.at,
        delivery_error: outcome.error,
      })
      .where('id', '=', emailId)
      .execute();
    return true;
  });
}

/** A failed attempt to try again at `nextAt`; false when `token` no longer holds the row. */
export async function retryLater(db: Executor, emailId: string, token: string, input: { nextAt: string; attempts: number; error: string }): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const r = await tx
      .updateTable('email_outbox')
      .set({ next_attempt_at: input.nextAt, lease_owner: null, last_error: input.error })
      .where('email_id', '=', emailId)
      .where('lease_owner', '=', token)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    await tx.updateTable('emails').set({ delivery_attempts: input.attempts, delivery_error: input.error }).where('id', '=', emailId).execute();
    return true;
  });
}

/** Mail still to deliver. */
export async function outboxDepth(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('email_outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What delivering one e-mail needs: its envelope, body and attachments' blobs. */
export async function deliveryOf(db: Executor, emailId: string) {
  const email = await db
    .selectFrom('emails')
    .innerJoin('email_bodies', 'email_bodies.email_id', 'emails.id')
    .select([
      'emails.id',
      'emails.from_address',
      'emails.to_json',
      'emails.cc_json',
      'emails.bcc_json',
      'emails.subject',
      'emails.sent_at',
      'email_bodies.html',
      'email_bodies.text',
    ])
    .where('emails.id', '=', emailId)
    .executeTakeFirst();
  if (!email) return undefined;
  const files = await db
    .selectFrom('email_files')
    .innerJoin('files', 'files.id', 'email_files.file_id')
    .select(['files.id', 'files.filename', 'files.mime_type', 'files.blob_key'])
    .where('email_files.email_id', '=', emailId)
    .orderBy('email_files.position')
    .execute();
  return { ...email, files };
}
