// The mail dispatcher (docs/emails.md §Delivery): delivers the outbox after commit, never inside a
// transaction. Each round claims due rows under a token of its own with a lease (src/jobs/
// mail-lease.ts), starts a message only while it holds the row with time to spare, and settles the
// outcomes while it holds them: delivered → the row leaves the outbox and the e-mail records `sent`
// (or `logged`); refused for good, out of attempts, its mailbox removed or an attachment's bytes
// missing from the store → `failed`; anything else → retried later with exponential backoff.
// Outcomes are settled many to a commit: each settle takes every outcome that arrived while the
// previous one ran (a group commit), so a busy dispatcher commits once per batch and an idle one at
// once. Every instance may run one: claims never overlap (SKIP LOCKED on PostgreSQL, one writer on
// SQLite), so a row is sent by one dispatcher at a time. The one window left is a crash (or a stall
// longer than the lease) after the SMTP server accepted a message and before its settle committed:
// the lease runs out and the message goes again, same Message-ID.
import { startPoller } from './poller.ts';
import { createSettler, type Settler } from './settler.ts';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { MailConfig } from '../config.ts';
import type { Db } from '../db/index.ts';
import * as outbox from '../emails/outbox-repository.ts';
import { asMissing, checkBytesThere, logMissingBytes, MissingBytesError, type StoredFile } from '../files/missing.ts';
import { isoNow } from '../lib/ids.ts';
import { MailError, type MailTransport, type OutgoingMail } from '../mail/transport.ts';
import { databaseGauge, type Metrics } from '../metrics/registry.ts';
import { keepLease, type Lease } from './mail-lease.ts';

export interface DispatcherDeps {
  db: Db;
  blobs: BlobStore;
  transport: MailTransport;
  logger: Logger;
  metrics?: Metrics | undefined;
  mail: MailConfig;
}

export interface Dispatcher {
  /** Stops claiming, lets deliveries under way finish, gives back rows not yet tried. */
  stop(): Promise<void>;
}

/** The Message-ID of an e-mail: derived from its id, so every attempt carries the same one. */
export function messageIdOf(emailId: string, from: string): string {
  const domain = from.slice(from.lastIndexOf('@') + 1).toLowerCase();
  return `<${emailId}@${domain}>`;
}

/** Delay before attempt `attempts + 1`: doubling from the base up to the maximum, with jitter. */
export function backoffMs(mail: Pick<MailConfig, 'retryBaseMs' | 'retryMaxMs'>, attempts: number, random = Math.random()): number {
  const plain = Math.min(mail.retryBaseMs * 2 ** Math.max(0, attempts - 1), mail.retryMaxMs);
  return Math.round(plain * (0.75 + random * 0.5));
}

const parse = (json: string) => JSON.parse(json) as string[];

type Delivery = NonNullable<ReturnType<Awaited<ReturnType<typeof outbox.deliveriesOf>>['get']>>;

/** The attachments of `e` as the checks of docs/files.md §Bytes missing from the store read them. */
const storedFiles = (e: Delivery): (StoredFile & { filename: string; mime_type: string })[] => e.files.map((f) => ({ ...f, blob_key: f.blob_key as string }));

/**
 * Throws MissingBytesError for the first attachment of `e` whose bytes the store lacks, holds at
 * another size than recorded, or holds damaged: lost bytes come back only by an operator's hand, so
 * the e-mail fails for good instead of being retried, and nothing else is sent in their place
 * (docs/emails.md §Delivery). Asks the size of each, reading no bytes, before any is opened.
 */
async function checkAttachments(blobs: BlobStore, e: Delivery): Promise<void> {
  for (const f of storedFiles(e)) await checkBytesThere(blobs, f);
}

function compose(blobs: BlobStore, e: Delivery): OutgoingMail {
  return {
    messageId: messageIdOf(e.id, e.from_address),
    emailId: e.id,
    from: e.from_address,
    to: parse(e.to_json),
    cc: parse(e.cc_json),
    bcc: parse(e.bcc_json),
    subject: e.subject ?? '',
    date: new Date(e.sent_at),
    ...(e.text !== null ? { text: e.text } : { html: e.html }),
    attachments: storedFiles(e).map((f) => ({
      filename: f.filename,
      contentType: f.mime_type,
      // Bytes gone or changed between the check and the read fail as missing too, not as a store fault.
      async open() {
        try {
          return await blobs.read(f.blob_key, undefined, { size: Number(f.size_bytes) });
        } catch (err) {
          throw asMissing(err, f);
        }
      },
    })),
  };
}

export function startMailDispatcher(deps: DispatcherDeps): Dispatcher {
  const { db, transport, logger, metrics, mail } = deps;
  const instance = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  let round = 0;

  /** Outcomes waiting for a commit, settled together (src/jobs/settler.ts). */
  function settler(token: string): Settler<outbox.Outcome> {
    return createSettler(async (batch) => {
      try {
        const settled = await outbox.settle(db.kysely, token, batch);
        for (const o of batch) {
          if (!settled.has(o.emailId) && o.status !== 'failed')
            logger.warn({ emailId: o.emailId }, 'e-mail delivered after its lease ran out; another dispatcher may deliver it again (same Message-ID)');
        }
      } catch (err) {
        logger.warn({ err, emails: batch.length }, 'could not settle delivered e-mails; the lease will bring them back (same Message-ID)');
      }
    });
  }

  /** What a failed send records; an attachment's missing bytes are logged at error for the operator. */
  function asFailure(err: unknown, emailId: string): MailError {
    if (err instanceof MailError) return err;
    if (err instanceof MissingBytesError) {
      logMissingBytes(logger, err, 'the e-mail attaching it fails for good (ATTACHMENT_MISSING)', { emailId });
      return new MailError('an attachment is missing from the blob store', { permanent: true, code: 'ATTACHMENT_MISSING' });
    }
    return new MailError('delivery failed', { permanent: false, code: 'ERROR' });
  }

  async function deliver(row: outbox.OutboxRow, email: Delivery | undefined, lease: Lease, settled: Settler<outbox.Outcome>): Promise<void> {
    const id = row.email_id;
    let failure: MailError | null = null;
    if (!email) failure = new MailError('the e-mail is gone', { permanent: true, code: 'MISSING' });
    // A removed mailbox sends nothing more, whatever is queued (docs/emails.md §Mailboxes): the
    // e-mail fails for good, recorded like a refusal.
    else if (email.mailbox_removed_at !== null) failure = new MailError('its mailbox is removed', { permanent: true, code: 'MAILBOX_REMOVED' });
    else {
      try {
        await checkAttachments(deps.blobs, email);
        await transport.send(compose(deps.blobs, email));
      } catch (err) {
        failure = asFailure(err, id);
      }
    }
    const at = isoNow(Date.now());
    if (!failure) {
      metrics?.emailDeliveries.inc({ transport: transport.kind });
      settled.add({ emailId: id, status: transport.kind === 'log' ? 'logged' : 'sent', attempts: row.attempts, at, error: null });
      return;
    }
    const final = failure.permanent || row.attempts >= mail.maxAttempts;
    metrics?.emailFailures.inc({ transport: transport.kind, final: String(final) });
    logger.warn(
      { emailId: id, code: failure.code, attempts: row.attempts, final },
      final ? 'e-mail delivery failed; giving up' : 'e-mail delivery failed; will retry',
    );
    if (final) settled.add({ emailId: id, status: 'failed', attempts: row.attempts, at, error: failure.code });
    else await outbox.retryLater(db.kysely, id, lease.token, { delayMs: backoffMs(mail, row.attempts), attempts: row.attempts, error: failure.code });
  }

  /** One claim and its deliveries; how many rows it claimed. */
  async function once(): Promise<number> {
    const token = `${instance}:${++round}`;
    const claimedAt = performance.now();
    const rows = await outbox.claimDue(db.kysely, { token, leaseMs: mail.leaseMs, limit: mail.concurrency * 8 });
    if (rows.length === 0) return 0;
    const lease = keepLease(
      db,
      logger,
      token,
      mail.leaseMs,
      claimedAt,
      rows.map((r) => r.email_id),
    );
    const settled = settler(token);
    // Rows not tried: left when stopping, or short of lease. Given back at once if still held.
    const untried: string[] = [];
    try {
      const emails = await outbox.deliveriesOf(
        db.kysely,
        rows.map((r) => r.email_id),
      );
      const queue = [...rows];
      const worker = async () => {
        for (let row = queue.shift(); row; row = queue.shift()) {
          if (poller.stopping || !(await lease.holds(row.email_id))) {
            untried.push(row.email_id);
            continue;
          }
          await deliver(row, emails.get(row.email_id), lease, settled).catch((err: unknown) =>
            logger.error({ err, emailId: row?.email_id }, 'e-mail delivery crashed; the lease will bring it back'),
          );
        }
      };
      await Promise.all(Array.from({ length: Math.min(mail.concurrency, rows.length) }, worker));
      await settled.drain();
      if (untried.length > 0) await outbox.release(db.kysely, token, untried);
    } finally {
      lease.end();
    }
    return rows.length;
  }

  const poller = startPoller(once, { pollMs: mail.pollMs, logger, what: 'outbox' });
  return {
    async stop() {
      await poller.stop();
      await transport.close();
    },
  };
}

/** /metrics: the mail still to deliver, read from the database at each scrape. */
export function outboxDepthGauge(metrics: Metrics, db: Db): void {
  databaseGauge(metrics, 'rolodex_email_outbox_depth', 'E-mails in the outbox: sent through the API and not yet delivered or given up.', () =>
    outbox.outboxDepth(db.kysely),
  );
}
