// Request and response shapes of the Members endpoints (docs/design.md §Members). The member
// resource is closed: exactly these members, the four fields always present.
import { type TSchema, Type } from '@sinclair/typebox';
import { Envelope } from '../lib/paging-schemas.ts';

const field = <V extends TSchema, T extends string>(value: V, valueType: T) =>
  Type.Object({ value, valueType: Type.Literal(valueType) }, { additionalProperties: false });

const FullName = Type.Object(
  { firstName: Type.Optional(Type.String()), lastName: Type.Optional(Type.String()) },
  { additionalProperties: false, description: 'The parts of the name that are known; an unknown part is left out.' },
);

export const Member = Type.Object(
  {
    id: Type.String({ description: "The user's id (usr_…)." }),
    createdAt: Type.String({ description: 'ISO 8601 timestamp' }),
    updatedAt: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 timestamp of the last change' }),
    httpLink: Type.Union([Type.String(), Type.Null()]),
    fields: Type.Object(
      {
        $email: field(Type.String(), 'EMAIL'),
        $name: field(FullName, 'FULL_NAME'),
        $profileImage: field(Type.Union([Type.String(), Type.Null()]), 'URL'),
        $role: field(Type.Union([Type.Literal('admin'), Type.Literal('member')]), 'TEXT'),
      },
      { additionalProperties: false },
    ),
    relationships: Type.Object({}, { additionalProperties: false, description: 'Always empty.' }),
  },
  { $id: 'Member', additionalProperties: false },
);

export const MemberEnvelope = Envelope(Member, 'MemberEnvelope');

export const MemberIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
