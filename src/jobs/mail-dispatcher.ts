// The mail dispatcher (docs/emails.md §Delivery): delivers the outbox after commit, never inside a
// transaction. Each round claims due rows under a token of its own with a lease, renews the lease
// while it delivers, and settles each row only while it holds it: delivered → the row leaves the
// outbox and the e-mail records `sent` (or `logged`); refused for good or out of attempts → `failed`;
// anything else → retried later with exponential backoff. Every instance may run one: claims never
// overlap (SKIP LOCKED on PostgreSQL, one writer on SQLite), so a row is sent by one dispatcher at a
// time. The one window left is a crash after the SMTP server accepted a message and before the row
// was settled: the lease runs out and the message goes again, under the same Message-ID.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Gauge } from 'prom-client';
import type { Logger } from 'pino';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { MailConfig } from '../config.ts';
import type { Db, Executor } from '../db/types.ts';
import * as outbox from '../emails/outbox-repository.ts';
import { isoNow } from '../lib/ids.ts';
import { MailError, type MailTransport, type OutgoingMail } from '../mail/transport.ts';
import type { Metrics } from '../metrics/registry.ts';

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

async function compose(db: Executor, blobs: BlobStore, emailId: string): Promise<OutgoingMail | undefined> {
  const e = await outbox.deliveryOf(db, emailId);
  if (!e) return undefined;
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
    attachments: e.files.map((f) => ({ filename: f.filename, contentType: f.mime_type, open: () => blobs.read(f.blob_key as string) })),
  };
}

export function startMailDispatcher(deps: DispatcherDeps): Dispatcher {
  const { db, transport, logger, metrics, mail } = deps;
  const instance = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  let round = 0;
  let stopping = false;
  let wake: (() => void) | null = null;

  async function deliver(row: outbox.OutboxRow, token: string): Promise<void> {
    const id = row.email_id;
    const email = await compose(db.kysely, deps.blobs, id);
    let failure: MailError | null = null;
    if (!email) failure = new MailError('the e-mail is gone', { permanent: true, code: 'MISSING' });
    else {
      try {
        await transport.send(email);
      } catch (err) {
        failure = err instanceof MailError ? err : new MailError('delivery failed', { permanent: false, code: 'ERROR' });
      }
    }
    const at = isoNow(Date.now());
    if (!failure) {
      metrics?.emailDeliveries.inc({ transport: transport.kind });
      const status = transport.kind === 'log' ? 'logged' : 'sent';
      if (!(await outbox.settle(db.kysely, id, token, { status, attempts: row.attempts, at, error: null }))) {
        logger.warn({ emailId: id }, 'e-mail delivered after its lease ran out; another dispatcher may deliver it again (same Message-ID)');
      }
      return;
    }
    const final = failure.permanent || row.attempts >= mail.maxAttempts;
    metrics?.emailFailures.inc({ transport: transport.kind, final: String(final) });
    logger.warn(
      { emailId: id, code: failure.code, attempts: row.attempts, final },
      final ? 'e-mail delivery failed; giving up' : 'e-mail delivery failed; will retry',
    );
    if (final) await outbox.settle(db.kysely, id, token, { status: 'failed', attempts: row.attempts, at, error: failure.code });
    else
      await outbox.retryLater(db.kysely, id, token, {
        nextAt: isoNow(Date.now() + backoffMs(mail, row.attempts)),
        attempts: row.attempts,
        error: failure.code,
      });
  }

  /** One claim and its deliveries; how many rows it claimed. */
  async function once(): Promise<number> {
    const token = `${instance}:${++round}`;
    const now = Date.now();
    const rows = await outbox.claimDue(db.kysely, { now: isoNow(now), leaseUntil: isoNow(now + mail.leaseMs), token, limit: mail.concurrency * 4 });
    if (rows.length === 0) return 0;
    const renew = setInterval(() => {
      outbox.renewLease(db.kysely, token, isoNow(Date.now() + mail.leaseMs)).catch((err: unknown) => logger.warn({ err }, 'could not renew the outbox lease'));
    }, mail.leaseMs / 3);
    const queue = [...rows];
    try {
      const worker = async () => {
        for (let row = queue.shift(); row && !stopping; row = queue.shift()) {
          await deliver(row, token).catch((err: unknown) =>
            logger.error({ err, emailId: row?.email_id }, 'e-mail delivery crashed; the lease will bring it back'),
          );
        }
      };
      await Promise.all(Array.from({ length: Math.min(mail.concurrency, rows.length) }, worker));
    } finally {
      clearInterval(renew);
    }
    // Stopping: rows not yet tried go back at once instead of waiting for the lease.
    if (queue.length > 0)
      await outbox.release(
        db.kysely,
        token,
        queue.map((r) => r.email_id),
        isoNow(Date.now()),
      );
    return rows.length;
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });

  const loop = (async () => {
    while (!stopping) {
      let claimed = 0;
      try {
        claimed = await once();
      } catch (err) {
        logger.warn({ err }, 'outbox round failed; the next one retries');
      }
      if (claimed === 0 && !stopping) await sleep(mail.pollMs);
    }
  })();

  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      await transport.close();
    },
  };
}

/** /metrics: the mail still to deliver, read from the database at each scrape. */
export function outboxDepthGauge(metrics: Metrics, db: Db): void {
  new Gauge({
    name: 'rolodex_email_outbox_depth',
    help: 'E-mails in the outbox: sent through the API and not yet delivered or given up.',
    registers: [metrics.registry],
    // Every worker of a cluster reads the same database: the sum would count each row N times.
    aggregator: 'max',
    async collect() {
      this.set(await outbox.outboxDepth(db.kysely));
    },
  });
}
