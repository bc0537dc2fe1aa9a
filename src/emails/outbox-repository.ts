// SQL of the outbox (docs/emails.md §Delivery). A row is due once next_attempt_at has passed. A
// claim takes due rows under a token of its own and moves their next_attempt_at to the end of its
// lease; the claimant renews the lease while it delivers, and settles each row only while it still
// holds that token. A dispatcher that dies leaves its rows to come due again when the lease ends.
// On PostgreSQL concurrent claims skip each other's locked rows (FOR UPDATE SKIP LOCKED); SQLite
// has one writer at a time, so a claim is atomic there anyway. Lease times are the database's
// clock, never an instance's: instances whose clocks disagree still agree on when a lease ends.
import { sql } from 'kysely';
import { chunks, claimable, timeFromNow, type Executor, write } from '../db/index.ts';
import type { DeliveryStatus, EmailOutboxTable } from './tables.ts';

export type OutboxRow = EmailOutboxTable;

export async function enqueue(tx: Executor, row: OutboxRow): Promise<void> {
  await tx.insertInto('email_outbox').values(row).execute();
}

/**
 * Claims up to `limit` due rows for `token` for `leaseMs` from the database's now; `attempts`
 * counts this one. The lease starts no earlier than the call, so the caller may count it from then.
 */
export async function claimDue(db: Executor, input: { token: string; leaseMs: number; limit: number }): Promise<OutboxRow[]> {
  // A read first: an idle outbox costs no write (on SQLite, no write lock every poll).
  const any = await db.selectFrom('email_outbox').select('email_id').where('next_attempt_at', '<=', timeFromNow(db, 0)).limit(1).executeTakeFirst();
  if (!any) return [];
  let due = db.selectFrom('email_outbox').select('email_id').where('next_attempt_at', '<=', timeFromNow(db, 0)).orderBy('next_attempt_at').limit(input.limit);
  due = claimable(db, due);
  return db
    .updateTable('email_outbox')
    .set({ lease_owner: input.token, next_attempt_at: timeFromNow(db, input.leaseMs), attempts: sql<number>`attempts + 1` })
    .where('email_id', 'in', due)
    .returningAll()
    .execute();
}

/** Extends the lease of the rows `token` still holds; returns their ids. */
export async function renewLease(db: Executor, token: string, leaseMs: number): Promise<string[]> {
  const rows = await db
    .updateTable('email_outbox')
    .set({ next_attempt_at: timeFromNow(db, leaseMs) })
    .where('lease_owner', '=', token)
    .returning('email_id')
    .execute();
  return rows.map((r) => r.email_id);
}

/** Gives back rows not tried (a dispatcher stopping, or short of lease): due at once, this attempt uncounted. */
export async function release(db: Executor, token: string, emailIds: string[]): Promise<void> {
  for (const part of chunks(emailIds)) {
    await db
      .updateTable('email_outbox')
      .set({ lease_owner: null, next_attempt_at: timeFromNow(db, 0), attempts: sql<number>`attempts - 1` })
      .where('lease_owner', '=', token)
      .where('email_id', 'in', part)
      .execute();
  }
}

export interface Outcome {
  emailId: string;
  status: Extract<DeliveryStatus, 'sent' | 'logged' | 'failed'>;
  attempts: number;
  at: string;
  error: string | null;
}

/**
 * Final outcomes, many in one transaction: each row `token` still holds leaves the outbox and its
 * e-mail records the outcome. Returns the ids settled; a row missing from them was no longer held
 * (its lease ran out and another dispatcher took it).
 */
export async function settle(db: Executor, token: string, outcomes: readonly Outcome[]): Promise<Set<string>> {
  const settled = new Set<string>();
  if (outcomes.length === 0) return settled;
  await write(db, async (tx) => {
    for (const part of chunks([...outcomes], 200)) {
      const gone = await tx
        .deleteFrom('email_outbox')
        .where('lease_owner', '=', token)
        .where(
          'email_id',
          'in',
          part.map((o) => o.emailId),
        )
        .returning('email_id')
        .execute();
      const held = new Set(gone.map((r) => r.email_id));
      const rows = part.filter((o) => held.has(o.emailId));
      if (rows.length === 0) continue;
      const values = sql.join(rows.map((o) => sql`(${o.emailId}, ${o.status}, ${String(o.attempts)}, ${o.status === 'failed' ? null : o.at}, ${o.error})`));
      await sql`update emails set delivery_status = v.column2, delivery_attempts = cast(v.column3 as integer), delivered_at = v.column4,
          delivery_error = v.column5
        from (values ${values}) as v where emails.id = v.column1`.execute(tx);
      for (const o of rows) settled.add(o.emailId);
    }
  });
  return settled;
}

/** A failed attempt to try again `delayMs` from now; false when `token` no longer holds the row. */
export async function retryLater(db: Executor, emailId: string, token: string, input: { delayMs: number; attempts: number; error: string }): Promise<boolean> {
  return write(db, async (tx) => {
    const r = await tx
      .updateTable('email_outbox')
      .set({ next_attempt_at: timeFromNow(tx, input.delayMs), lease_owner: null, last_error: input.error })
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

/**
 * What delivering these e-mails needs: envelopes, bodies and attachments' blobs (key and recorded
 * size, which the dispatcher checks before it sends), in two queries.
 * Each envelope carries its mailbox's `removed_at`, read in the same statement: mail of a mailbox
 * removed by the time of this read is not sent (docs/emails.md §Delivery).
 */
export async function deliveriesOf(db: Executor, emailIds: readonly string[]) {
  const emails = await db
    .selectFrom('emails')
    .innerJoin('email_bodies', 'email_bodies.email_id', 'emails.id')
    .innerJoin('mailboxes', 'mailboxes.id', 'emails.mailbox_id')
    .select([
      'mailboxes.removed_at as mailbox_removed_at',
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
    .where('emails.id', 'in', emailIds)
    .execute();
  const files = await db
    .selectFrom('email_files')
    .innerJoin('files', 'files.id', 'email_files.file_id')
    .select(['email_files.email_id', 'files.id', 'files.workspace_id', 'files.filename', 'files.mime_type', 'files.size_bytes', 'files.blob_key'])
    .where('email_files.email_id', 'in', emailIds)
    .orderBy('email_files.email_id')
    .orderBy('email_files.position')
    .execute();
  return new Map(emails.map((e) => [e.id, { ...e, files: files.filter((f) => f.email_id === e.id) }]));
}
