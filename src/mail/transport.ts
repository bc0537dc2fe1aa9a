// How mail leaves the server: one small interface, two transports. `SMTP_URL` set → SMTP (through
// nodemailer, src/mail/smtp.ts); unset → the log transport (src/mail/log.ts), which delivers
// nothing and says so in the log. Transports never log bodies or addresses at info level.
import type { Readable } from 'node:stream';

export interface OutgoingAttachment {
  filename: string;
  contentType: string;
  /** Opened when the message is written; a transport consumes or destroys it, also when another fails to open. */
  open(): Promise<Readable>;
}

export interface OutgoingMail {
  /** Stable for one e-mail, so that receivers can drop a second copy (docs/emails.md §Delivery). */
  messageId: string;
  /** The e-mail's id, for logs. */
  emailId: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  date: Date;
  /** Exactly one of text and html. */
  text?: string;
  html?: string;
  attachments: OutgoingAttachment[];
}

/** A delivery that did not happen. `permanent`: the receiving server refused it for good (5xx). */
export class MailError extends Error {
  override name = 'MailError';
  readonly permanent: boolean;
  /** A short code for the e-mail's record and the metrics: an SMTP reply code or a network error name. */
  readonly code: string;
  constructor(message: string, opts: { permanent: boolean; code: string }) {
    super(message);
    this.permanent = opts.permanent;
    this.code = opts.code;
  }
}

export interface MailTransport {
  readonly kind: 'smtp' | 'log';
  /** Resolves once the receiving server accepted the message; throws MailError otherwise. */
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}
