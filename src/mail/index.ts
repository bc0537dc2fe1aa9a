// The transport the configuration asks for (docs/config.md): SMTP when SMTP_URL is set, else the
// log transport.
import type { Logger } from 'pino';
import type { MailConfig } from '../config.ts';
import { logTransport } from './log.ts';
import { smtpTransport } from './smtp.ts';
import type { MailTransport } from './transport.ts';

export function createMailTransport(mail: MailConfig, logger: Logger): MailTransport {
  return mail.smtpUrl ? smtpTransport({ url: mail.smtpUrl, connections: mail.concurrency }) : logTransport(logger);
}
