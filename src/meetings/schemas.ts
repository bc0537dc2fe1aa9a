// Request and response shapes of the meeting endpoints (docs/meetings.md). The resource is exact:
// every field and relationship is listed, so serialization keeps them and drops anything else.
import { type TSchema, Type } from '@sinclair/typebox';
import { Envelope } from '../lib/paging-schemas.ts';
import { LIMITS } from './rules.ts';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const Email = Type.String({ format: 'email', maxLength: LIMITS.address });
const DateTime = Type.String({ maxLength: 64, description: 'ISO 8601 date-time with a time zone, not later than now.' });
const Privacy = Type.Union([Type.Literal('FULL'), Type.Literal('METADATA'), Type.Null()], {
  description: 'FULL, METADATA, or null (not set: resolves as FULL).',
});
const FileId = Type.String({ minLength: 1, maxLength: 255 });

// Keys other than those listed reach the service, which answers unknown_relationship or
// read_only_relationship (and read_only_field / unknown_field for update fields), as the contract
// names them. Their values are any JSON of at most three levels, as a field or relationship value
// can be: nothing deeper ever passes validation.
const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
const Flat = Type.Union([Scalar, Type.Array(Scalar)]);
const AnyOther = Type.Union([Flat, Type.Record(Type.String(), Flat)]);

export const CreateMeetingBody = Type.Object(
  {
    fields: Type.Object(
      {
        $title: Type.String({ minLength: 1, maxLength: LIMITS.title }),
        $startDate: DateTime,
        $endDate: DateTime,
        $description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.description }))),
        $meetingUrl: Type.Optional(
          Nullable(Type.String({ format: 'uri', maxLength: LIMITS.meetingUrl, description: 'An absolute http or https URL with a host.' })),
        ),
        $organizerEmail: Type.Optional(Nullable(Email)),
        // A multi-valued EMAIL field: one address is taken as a list of one (docs/meetings.md §Writes).
        // An address repeated, in any case, is the service's one rule (rules.ts participants), which
        // names the repeat: a schema's uniqueItems would answer an exact repeat apart, naming the array.
        // `null` is "never given", as the resource answers a meeting created without attendees.
        $attendeeEmails: Type.Optional(
          Type.Union([Type.Array(Email, { maxItems: LIMITS.attendees, description: 'Each address once, ignoring case.' }), Email, Type.Null()]),
        ),
        $privacySetting: Type.Optional(Privacy),
      },
      { additionalProperties: false },
    ),
    relationships: Type.Optional(
      Type.Object(
        {
          $transcript: Type.Optional(
            Type.Union([Type.Array(FileId, { minItems: 1, maxItems: 1 }), FileId], {
              description: 'Required inside relationships: one COMPLETED file of purpose meeting_transcript, as an id or an array of one.',
            }),
          ),
        },
        { additionalProperties: AnyOther },
      ),
    ),
    autoCreateRecords: Type.Optional(Type.Boolean({ description: 'Create contacts for addresses that match no member and no contact.' })),
  },
  { additionalProperties: false },
);

export const UpdateMeetingBody = Type.Object(
  {
    fields: Type.Optional(
      Type.Object(
        { $privacySetting: Type.Optional(Privacy) },
        { additionalProperties: AnyOther, description: 'Only $privacySetting (required inside); other meeting fields are read-only.' },
      ),
    ),
    relationships: Type.Optional(
      Type.Object(
        {
          $transcript: Type.Optional(
            Type.Object({ replace: FileId }, { additionalProperties: false, description: 'Required inside relationships: the new transcript file.' }),
          ),
        },
        { additionalProperties: AnyOther },
      ),
    ),
  },
  { additionalProperties: false },
);

const field = <V extends TSchema>(value: V, valueType: string, description: string) =>
  Type.Object({ value, valueType: Type.Literal(valueType) }, { additionalProperties: false, description });

const rel = (cardinality: 'has_one' | 'has_many', objectType: string, description: string) =>
  Type.Object(
    { cardinality: Type.Literal(cardinality), objectType: Type.Literal(objectType), values: Type.Array(Type.String()) },
    { additionalProperties: false, description },
  );

export const Meeting = Type.Object(
  {
    id: Type.String(),
    objectType: Type.Literal('meeting'),
    accessLevel: Type.Union([Type.Literal('FULL'), Type.Literal('METADATA')], { description: "The caller's resolved access to this meeting." }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Nullable(Type.String()),
    httpLink: Nullable(Type.String()),
    externalId: Nullable(Type.String()),
    fields: Type.Object(
      {
        $title: field(Type.String(), 'TEXT', 'The title.'),
        $startDate: field(Type.String(), 'DATETIME', 'When the meeting started (UTC).'),
        $endDate: field(Type.String(), 'DATETIME', 'When the meeting ended (UTC).'),
        $description: field(Nullable(Type.String()), 'TEXT', 'The description; null when accessLevel is METADATA.'),
        $meetingUrl: field(Nullable(Type.String()), 'URL', 'The address of the call.'),
        $organizerEmail: field(Nullable(Type.String()), 'EMAIL', "The organizer's address."),
        $attendeeEmails: field(Nullable(Type.Array(Type.String())), 'EMAIL', "The attendees' addresses."),
        $privacySetting: field(Nullable(Type.Union([Type.Literal('FULL'), Type.Literal('METADATA')])), 'TEXT', 'null when not set (resolves as FULL).'),
      },
      { additionalProperties: false },
    ),
    relationships: Type.Object(
      {
        $transcript: rel('has_one', 'file', 'The transcript file; empty when accessLevel is METADATA.'),
        $contact: rel('has_many', 'contact', 'Contacts whose $email holds the organizer or an attendee address (computed when read).'),
        $account: rel('has_many', 'account', 'Accounts of those contacts (computed when read).'),
        $opportunity: rel('has_many', 'opportunity', 'Opportunities of those accounts (computed when read).'),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'Meeting', additionalProperties: false },
);

export const MeetingList = Envelope(Meeting, 'MeetingList');

export const MeetingParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
