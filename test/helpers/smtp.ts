// A real SMTP server for the delivery tests (smtp-server, on 127.0.0.1): it keeps every message it
// accepted, parsed (mailparser), with its envelope. It can be stopped and started again on the
// same port (the mail server goes down and comes back), refuse recipients for good (550), or hold
// messages without answering (a delivery in flight when the sender dies): a held message was never
// accepted, and is not kept.
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './process.ts';

export interface Received {
  envelope: { from: string; to: string[] };
  mail: ParsedMail;
  raw: string;
}

export interface TestSmtp {
  url: string;
  port: number;
  received: Received[];
  /** While true, DATA is read but never answered; each such message calls onHold. */
  hold: boolean;
  onHold: (() => void) | null;
  /** Recipients refused with 550. */
  refuse: Set<string>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Resolves once `n` messages have arrived (fails after `ms`). */
  waitFor(n: number, ms?: number): Promise<Received[]>;
  byMessageId(id: string): Received[];
}

export async function startTestSmtp(port?: number): Promise<TestSmtp> {
  const chosen = port ?? (await freePort());
  let server: SMTPServer | null = null;
  const smtp: TestSmtp = {
    url: `smtp://127.0.0.1:${chosen}`,
    port: chosen,
    received: [],
    hold: false,
    onHold: null,
    refuse: new Set(),
    async start() {
      server = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        closeTimeout: 200,
        size: 50 * 1024 * 1024,
        onRcptTo(address, _session, callback) {
          if (smtp.refuse.has(address.address)) {
            const err = new Error('mailbox unavailable') as Error & { responseCode: number };
            err.responseCode = 550;
            return callback(err);
          }
          callback();
        },
        onData(stream, session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            if (smtp.hold) {
              smtp.onHold?.();
              return;
            }
            const raw = Buffer.concat(chunks).toString('utf8');
            const envelope = {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
            };
            simpleParser(raw).then(
              (mail) => {
                smtp.received.push({ envelope, mail, raw });
                callback();
              },
              (err: Error) => callback(err),
            );
          });
        },
      });
      const s = server;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(chosen, '127.0.0.1', () => resolve());
      });
      s.on('error', () => {});
    },
    async stop() {
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async waitFor(n, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (smtp.received.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} messages, got ${smtp.received.length} within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return smtp.received;
    },
    byMessageId(id) {
      return smtp.received.filter((r) => r.mail.messageId === id);
    },
  };
  await smtp.start();
  return smtp;
}

/** Waits until `check` holds (polling), or fails naming `what`. */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
