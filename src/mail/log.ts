// The log transport: what delivery does when no SMTP server is configured. Each message is written
// to the log (its ids and how many recipients) and counted as delivered, but goes nowhere. Subject,
// body and addresses never reach the log at info level; the addresses appear at debug.
import type { Logger } from 'pino';
import type { MailTransport, OutgoingMail } from './transport.ts';

export function logTransport(logger: Logger): MailTransport {
  return {
    kind: 'log',
    async send(mail: OutgoingMail) {
      const recipients = mail.to.length + mail.cc.length + mail.bcc.length;
      logger.info(
        { emailId: mail.emailId, messageId: mail.messageId, recipients, attachments: mail.attachments.length },
        'e-mail queued (log transport: not sent)',
      );
      logger.debug({ emailId: mail.emailId, from: mail.from, to: mail.to, cc: mail.cc, bcc: mail.bcc }, 'e-mail addresses (log transport)');
    },
    async close() {},
  };
}
