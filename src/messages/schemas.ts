// The message resource (read-only), exactly: every property the service returns is listed, so
// serialization keeps them and drops anything else.
import { Type } from '@sinclair/typebox';
import { Envelope } from '../lib/paging-schemas.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const field = (value: ReturnType<typeof Nullable>, valueType: ReturnType<typeof Type.Union> | ReturnType<typeof Type.Literal>, description: string) =>
  Type.Object({ value, valueType }, { additionalProperties: false, description });

const MessageFields = Type.Object(
  {
    $text: field(Nullable(Type.String()), Type.Union([Type.Literal('TEXT'), Type.Literal('HTML')]), 'The message text; null when accessLevel is METADATA.'),
    $sentAt: field(Nullable(Type.String()), Type.Literal('DATETIME'), 'When the message was sent.'),
    $provider: field(Nullable(Type.String()), Type.Literal('TEXT'), 'The chat provider.'),
    $providerThreadId: field(Nullable(Type.String()), Type.Literal('TEXT'), "The provider's thread id, if any."),
    $editedAt: field(Nullable(Type.String()), Type.Literal('DATETIME'), 'When the message was last edited, if ever.'),
  },
  { additionalProperties: false },
);

const rel = (cardinality: 'has_one' | 'has_many', objectType: string, description: string) =>
  Type.Object(
    { cardinality: Type.Literal(cardinality), objectType: Type.Literal(objectType), values: Type.Array(Type.String()) },
    { additionalProperties: false, description },
  );

export const Message = Type.Object(
  {
    id: Type.String(),
    accessLevel: Type.Union([Type.Literal('FULL'), Type.Literal('METADATA')], { description: "The caller's resolved access level for this message." }),
    createdAt: Type.String({ format: 'date-time' }),
    fields: MessageFields,
    httpLink: Nullable(Type.String()),
    objectType: Type.Literal('message'),
    relationships: Type.Object(
      {
        $channel: rel('has_one', 'channel', 'The channel the message was sent in.'),
        $files: rel('has_many', 'file', 'Attached files; empty when accessLevel is METADATA.'),
      },
      { additionalProperties: false },
    ),
    updatedAt: Nullable(Type.String()),
    externalId: Nullable(Type.String()),
  },
  { $id: 'Message', additionalProperties: false },
);

export const MessageList = Envelope(Message, 'MessageList');

export const MessageParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
