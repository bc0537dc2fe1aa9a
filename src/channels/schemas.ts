// The channel resource (read-only; docs/messages.md §Channels), exactly: every property the service
// returns is listed, so serialization keeps them and drops anything else.
import { type TSchema, Type } from '@sinclair/typebox';
import { Envelope } from '../lib/paging-schemas.ts';

const text = (description: string, value: TSchema = Type.String()) =>
  Type.Object({ value, valueType: Type.Literal('TEXT') }, { additionalProperties: false, description });

export const Channel = Type.Object(
  {
    id: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    fields: Type.Object(
      {
        $name: text('The channel name.'),
        $provider: text('The chat provider the channel comes from.'),
        $visibility: text(
          'Who sees the channel and its messages: public, restricted or private.',
          Type.Union([Type.Literal('public'), Type.Literal('restricted'), Type.Literal('private')]),
        ),
      },
      { additionalProperties: false },
    ),
    httpLink: Type.Union([Type.String(), Type.Null()]),
    objectType: Type.Literal('channel'),
    relationships: Type.Object(
      {
        $members: Type.Object(
          { cardinality: Type.Literal('has_many'), objectType: Type.Literal('member'), values: Type.Array(Type.String()) },
          { additionalProperties: false, description: 'The members of the channel (usr_…).' },
        ),
      },
      { additionalProperties: false },
    ),
    updatedAt: Type.Union([Type.String(), Type.Null()]),
    externalId: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Channel', additionalProperties: false },
);

export const ChannelList = Envelope(Channel, 'ChannelList');

export const ChannelParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
