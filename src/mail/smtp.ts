// SMTP delivery through nodemailer, with a small pool of connections. A reply in the 5xx range
// refuses the message for good; anything else (4xx, a network error, a timeout) is worth another
// try later. Envelope recipients come from to, cc and bcc; bcc never appears in the headers.
import type { Readable } from 'node:stream';
import { createTransport } from 'nodemailer';
import { MailError, type MailTransport, type OutgoingAttachment, type OutgoingMail } from './transport.ts';

export interface SmtpOptions {
  url: string;
  /** Messages in flight at once: the pool's connections. */
  connections: number;
}

// Bounds on each step of one delivery: a server that stops answering fails the attempt instead of
// holding it (the lease of the outbox row is renewed meanwhile, docs/emails.md §Delivery).
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 60_000 };

function classify(err: unknown): MailError {
  const e = err as { responseCode?: unknown; code?: unknown; message?: unknown };
  const reply = typeof e.responseCode === 'number' ? e.responseCode : null;
  const code = reply !== null ? String(reply) : typeof e.code === 'string' ? e.code : 'ERROR';
  // The server's text may quote addresses: the MailError keeps only the code.
  return new MailError(`delivery failed (${code})`, { permanent: reply !== null && reply >= 500, code });
}

/**
 * Opens every attachment's stream. Each open stream holds a file descriptor or a socket until it is
 * consumed or destroyed (src/blobs/blob-store.ts): when any open fails, every other is awaited and
 * each one that opened is destroyed before the failure is thrown.
 */
async function openAll(attachments: readonly OutgoingAttachment[]): Promise<Readable[]> {
  const opened = await Promise.allSettled(attachments.map((a) => a.open()));
  const failed = opened.find((o) => o.status === 'rejected');
  if (!failed) return opened.map((o) => (o as PromiseFulfilledResult<Readable>).value);
  for (const o of opened) if (o.status === 'fulfilled') o.value.destroy();
  throw failed.reason;
}

export function smtpTransport(opts: SmtpOptions): MailTransport {
  const transporter = createTransport({ url: opts.url, pool: true, maxConnections: opts.connections, maxMessages: 1000, ...TIMEOUTS });
  return {
    kind: 'smtp',
    async send(mail: OutgoingMail) {
      const streams = await openAll(mail.attachments);
      const attachments = mail.attachments.map((a, i) => ({ filename: a.filename, contentType: a.contentType, content: streams[i] as Readable }));
      try {
        await transporter.sendMail({
          messageId: mail.messageId,
          date: mail.date,
          from: mail.from,
          to: mail.to,
          cc: mail.cc,
          bcc: mail.bcc,
          subject: mail.subject,
          ...(mail.text !== undefined ? { text: mail.text } : { html: mail.html ?? '' }),
          attachments,
          // Addresses are bare and already checked; never read a file or URL named in them.
          disableFileAccess: true,
          disableUrlAccess: true,
        });
      } catch (err) {
        throw classify(err);
      } finally {
        for (const a of attachments) a.content.destroy();
      }
    },
    async close() {
      transporter.close();
    },
  };
}
