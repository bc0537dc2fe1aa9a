// Request and response shapes of the Lists endpoints (docs/design.md §Lists).
import { Type } from '@sinclair/typebox';
import { Envelope } from '../lib/paging-schemas.ts';
import { AnyRecord } from '../records/schemas.ts';

export const MAX_IDS = 1000;

// An id has 1 to 255 characters, as a record's relationship ids (docs/records.md §Writing
// relationships): an empty one is invalid_value at its place, never an id looked for.
const EntityId = Type.String({ minLength: 1, maxLength: 255 });
// Array first, so that a bad item is reported at its own index (`…add[2]`).
const MemberIds = Type.Union([Type.Array(EntityId, { maxItems: MAX_IDS }), EntityId], {
  description: `An entity id or an array of at most ${MAX_IDS} entity ids.`,
});

const MemberChange = Type.Object({ add: Type.Optional(MemberIds), remove: Type.Optional(MemberIds) }, { additionalProperties: false });

// The three documented keys; any other key reaches the service, which answers unknown_relationship.
export const CreateListBody = Type.Object(
  {
    fields: Type.Object(
      {
        $name: Type.String({ description: 'Display name, 1 to 255 characters after trimming.' }),
        $objectType: Type.String({ description: 'account, contact or opportunity ($account, $contact, $opportunity accepted).' }),
      },
      { additionalProperties: false },
    ),
    relationships: Type.Optional(
      Type.Object(
        { $accounts: Type.Optional(MemberIds), $contacts: Type.Optional(MemberIds), $opportunities: Type.Optional(MemberIds) },
        { additionalProperties: MemberIds, description: 'Initial members: the one key matching $objectType.' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const UpdateListBody = Type.Object(
  {
    fields: Type.Optional(Type.Object({ $name: Type.Optional(Type.String()) }, { additionalProperties: false })),
    relationships: Type.Optional(
      Type.Object(
        { $accounts: Type.Optional(MemberChange), $contacts: Type.Optional(MemberChange), $opportunities: Type.Optional(MemberChange) },
        { additionalProperties: MemberChange, description: "Members to add and remove: the one key matching the list's $objectType." },
      ),
    ),
  },
  { additionalProperties: false },
);

const TextField = Type.Object({ value: Type.String(), valueType: Type.Literal('TEXT') }, { additionalProperties: false });

export const List = Type.Object(
  {
    id: Type.String(),
    createdAt: Type.String({ description: 'ISO 8601 timestamp' }),
    fields: Type.Object({ $name: TextField, $objectType: TextField }, { additionalProperties: false }),
    httpLink: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'List', additionalProperties: false },
);

export const ListEnvelope = Envelope(List, 'ListEnvelope');
export const RecordEnvelope = Envelope(AnyRecord, 'EntityEnvelope');

// A list id in the path has the bounds of every id in a path (a record's, a meeting's): an empty
// one (`/v1/lists/`) or one over 255 characters is invalid_parameter naming it, never a list not
// found, and a create sent to `/v1/lists/` is refused for its path, not read as an update's body.
const ListId = Type.String({ minLength: 1, maxLength: 255 });
export const IdParams = Type.Object({ id: ListId }, { additionalProperties: false });
export const ListIdParams = Type.Object({ listId: ListId }, { additionalProperties: false });
