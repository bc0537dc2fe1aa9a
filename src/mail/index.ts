// The transport the configuration asks for (docs/config.md): SMTP when SMTP_URL is set, else the
// log transport. nodemailer is loaded only for SMTP: a process keeps in memory only what its
// configuration uses (docs/performance.md §Loading only what is configured).
import type { Logger } from 'pino';
import type { MailConfig } from '../config.ts';
import { logTransport } from './log.ts';
import type { MailTransport } from './transport.ts';

export async function createMailTransport(mail: MailConfig, logger: Logger): Promise<MailTransport> {
  if (!mail.smtpUrl) return logTransport(logger);
  const { smtpTransport } = await import('./smtp.ts');
  return smtpTransport({ url: mail.smtpUrl, connections: mail.concurrency });
}
