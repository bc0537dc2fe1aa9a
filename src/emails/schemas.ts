// Request and response shapes of the e-mail endpoints (docs/emails.md), closed and exact: every
// property the service returns is listed, so serialization keeps them and drops nothing.
import { type TSchema, Type } from '@sinclair/typebox';
import { MAX_ADDRESSES, MAX_ATTACHMENTS, MAX_BODY, MAX_SUBJECT } from './limits.ts';
import { Envelope } from '../lib/paging-schemas.ts';

const Address = Type.String({ format: 'email', maxLength: 320, description: 'A bare e-mail address, without a display name.' });
// Recipients are a multi-valued EMAIL field of the resource: an array, or one address taken as a
// list of one, as every multi-valued field of the API takes it (docs/emails.md §Sending).
const Addresses = (minItems: number, description: string) =>
  Type.Union([Type.Array(Address, { minItems, maxItems: MAX_ADDRESSES }), Address], { description: `${description} One address may be given as a string.` });

const MessageBody = (minLength: number) =>
  Type.Object(
    {
      contentType: Type.Optional(Type.Union([Type.Literal('HTML'), Type.Literal('TEXT')], { description: 'HTML (the default) or TEXT.' })),
      content: Type.String({
        minLength,
        maxLength: MAX_BODY,
        description: 'The body; a TEXT body is delivered as plain text and kept in $body as escaped HTML.',
      }),
    },
    { additionalProperties: false },
  );

const Attachments = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
  maxItems: MAX_ATTACHMENTS,
  description: `Ids of COMPLETED files of the workspace, at most ${MAX_ATTACHMENTS}, each at most 20 MiB, together at most 25 MiB.`,
});

const From = Type.String({ format: 'email', maxLength: 320, description: 'The address of a mailbox of the calling user, compared ignoring case.' });

export const SendEmailBody = Type.Object(
  {
    from: From,
    to: Addresses(1, 'At least 1 address; at most 500 recipients across to, cc and bcc.'),
    cc: Type.Optional(Addresses(0, 'At most 500 recipients across to, cc and bcc.')),
    bcc: Type.Optional(Addresses(0, 'At most 500 recipients across to, cc and bcc.')),
    subject: Type.String({ minLength: 1, maxLength: MAX_SUBJECT, description: 'Not white space alone.' }),
    messageBody: MessageBody(1),
    attachments: Type.Optional(Attachments),
  },
  { additionalProperties: false },
);

export const DraftEmailBody = Type.Object(
  {
    from: From,
    to: Type.Optional(Addresses(0, 'At most 500 recipients across to, cc and bcc.')),
    cc: Type.Optional(Addresses(0, 'At most 500 recipients across to, cc and bcc.')),
    bcc: Type.Optional(Addresses(0, 'At most 500 recipients across to, cc and bcc.')),
    subject: Type.Optional(Type.String({ maxLength: MAX_SUBJECT })),
    messageBody: Type.Optional(MessageBody(0)),
    attachments: Type.Optional(Attachments),
  },
  { additionalProperties: false, description: 'At least one member besides from must be non-empty.' },
);

export const SentEmail = Type.Object(
  { sentAt: Type.String({ format: 'date-time', description: 'When the e-mail was queued for delivery.' }) },
  { additionalProperties: false },
);
export const DraftedEmail = Type.Object(
  { draftedAt: Type.String({ format: 'date-time', description: 'When the draft was stored.' }) },
  { additionalProperties: false },
);

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const field = <V extends TSchema, L extends string>(value: V, valueType: L, description: string) =>
  Type.Object({ value, valueType: Type.Literal(valueType) }, { additionalProperties: false, description });
const rel = (cardinality: 'has_one' | 'has_many', objectType: string, description: string) =>
  Type.Object(
    { cardinality: Type.Literal(cardinality), objectType: Type.Literal(objectType), values: Type.Array(Type.String()) },
    { additionalProperties: false, description },
  );

const fields = {
  $subject: field(Nullable(Type.String()), 'TEXT', 'The subject; null when accessLevel is METADATA.'),
  $sentAt: field(Type.String(), 'DATETIME', 'When the e-mail was sent (queued, for one sent through the API).'),
  $from: field(Type.String(), 'EMAIL', 'The sending address.'),
  $to: field(Type.Array(Type.String()), 'EMAIL', 'Recipients.'),
  $cc: field(Type.Array(Type.String()), 'EMAIL', 'Copy recipients.'),
  $bcc: field(Type.Array(Type.String()), 'EMAIL', 'Blind copy recipients.'),
};

const relationships = Type.Object(
  {
    $contact: rel('has_many', 'contact', 'Contacts whose $email holds any address of the e-mail (ignoring case), as of now.'),
    $attachment: Type.Optional(rel('has_many', 'file', 'Attached files; absent when accessLevel is METADATA.')),
    $owner: rel('has_one', 'member', "The owner of the e-mail's mailbox."),
  },
  { additionalProperties: false },
);

const resource = <F extends TSchema>(fieldsSchema: F, $id: string) =>
  Type.Object(
    {
      id: Type.String(),
      objectType: Type.Literal('email'),
      accessLevel: Type.Union([Type.Literal('FULL'), Type.Literal('METADATA')], { description: "The caller's access level for this e-mail." }),
      createdAt: Type.String({ format: 'date-time' }),
      updatedAt: Nullable(Type.String()),
      httpLink: Nullable(Type.String()),
      externalId: Nullable(Type.String()),
      fields: fieldsSchema,
      relationships,
    },
    { $id, additionalProperties: false },
  );

export const Email = resource(
  Type.Object(
    { ...fields, $body: field(Nullable(Type.String()), 'HTML', 'The body as HTML; null when accessLevel is METADATA.') },
    { additionalProperties: false },
  ),
  'Email',
);

/** A list item: the resource without `$body`. */
export const EmailListItem = resource(Type.Object(fields, { additionalProperties: false }), 'EmailListItem');

export const EmailList = Envelope(EmailListItem, 'EmailList');

export const EmailParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
