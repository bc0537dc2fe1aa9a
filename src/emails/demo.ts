// Demo mailboxes and mail for `rolodex demo`: Ann's mailbox shows its mail to everyone (FULL),
// Bob's only its metadata to others (METADATA); the printed lines list the mail and send one.
import type { DemoPart } from '../import/demo-part.ts';

const received = (externalId: string, mailbox: string, at: string, from: string, to: string, subject: string, body: string) => ({
  object: 'email',
  externalId,
  mailbox,
  fields: {
    $subject: { value: subject, valueType: 'TEXT' },
    $body: { value: body, valueType: 'HTML' },
    $sentAt: { value: at, valueType: 'DATETIME' },
    $from: { value: from, valueType: 'EMAIL' },
    $to: { value: [to], valueType: 'EMAIL' },
  },
});

export const emailsPart: DemoPart = {
  objects: () => [
    { object: 'mailbox', externalId: 'mb-ann', user: 'u-ann', address: 'ann@acme.test', othersSee: 'FULL' },
    { object: 'mailbox', externalId: 'mb-bob', user: 'u-bob', address: 'bob@acme.test', othersSee: 'METADATA' },
    received('em-1', 'mb-ann', '2026-03-02T08:30:00.000Z', 'buyer@globex.test', 'ann@acme.test', 'Renewal terms', '<p>Can we talk about the renewal?</p>'),
    received('em-2', 'mb-bob', '2026-03-02T10:00:00.000Z', 'cfo@initech.test', 'bob@acme.test', 'Budget, confidential', '<p>Our budget is 40k.</p>'),
  ],
  after: async (ctx) => {
    const handbook = ctx.imported.ids.file?.['file-handbook'];
    const h = '-H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01"';
    const send = {
      from: 'ann@acme.test',
      to: ['buyer@globex.test'],
      subject: 'Re: Renewal terms',
      messageBody: { contentType: 'TEXT', content: 'Happy to. Our handbook is attached.' },
      ...(handbook ? { attachments: [handbook] } : {}),
    };
    return [
      `curl -s ${h} "{base}/v1/emails?limit=5"`,
      `curl -s ${h} -H "Content-Type: application/json" -d '${JSON.stringify(send)}' {base}/v1/emails/send   # delivered by SMTP_URL, or written to the log`,
    ];
  },
};
