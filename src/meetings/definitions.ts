// GET /v1/meetings/definitions (docs/meetings.md §Definitions): the meeting's fields and
// relationships in the shape of the other definitions operations. Meetings take no custom fields
// or relationships, so the set is fixed; its ids are derived per workspace as the system
// definitions of records are, so they are stable and differ between workspaces.
import type { Static } from '@sinclair/typebox';
import type { Ctx } from '../lib/context.ts';
import { derivedId } from '../lib/ids.ts';
import type { Definitions } from '../records/schemas.ts';

type Out = Static<typeof Definitions>;
type FieldOut = Out['fieldDefinitions'][string];

// readOnly: never writable through the API. Every field is written on create; an update writes
// only $privacySetting (docs/meetings.md).
const FIELDS: ReadonlyArray<[string, string, FieldOut['valueType'], FieldOut['typeConfiguration']]> = [
  ['$title', 'Title', 'TEXT', {}],
  ['$startDate', 'Start date', 'DATETIME', {}],
  ['$endDate', 'End date', 'DATETIME', {}],
  ['$description', 'Description', 'TEXT', {}],
  ['$meetingUrl', 'Meeting URL', 'URL', {}],
  ['$organizerEmail', 'Organizer email', 'EMAIL', {}],
  ['$attendeeEmails', 'Attendee emails', 'EMAIL', { multipleValues: true }],
  ['$privacySetting', 'Privacy setting', 'TEXT', {}],
];

const RELATIONSHIPS: ReadonlyArray<[string, string, 'HAS_ONE' | 'HAS_MANY', string]> = [
  ['$transcript', 'Transcript', 'HAS_ONE', 'file'],
  ['$contact', 'Contacts', 'HAS_MANY', 'contact'],
  ['$account', 'Accounts', 'HAS_MANY', 'account'],
  ['$opportunity', 'Opportunities', 'HAS_MANY', 'opportunity'],
];

export function meetingDefinitions(ctx: Pick<Ctx, 'actor'>): Out {
  const seed = (kind: string, key: string) => `${ctx.actor.workspaceId}/meeting/${kind}/${key}`;
  const fieldDefinitions: Out['fieldDefinitions'] = {};
  for (const [key, label, valueType, typeConfiguration] of FIELDS)
    fieldDefinitions[key] = { id: derivedId('fld', seed('field', key)), label, description: null, valueType, readOnly: false, typeConfiguration };
  const relationshipDefinitions: Out['relationshipDefinitions'] = {};
  for (const [key, label, cardinality, objectType] of RELATIONSHIPS)
    relationshipDefinitions[key] = { id: derivedId('rld', seed('relationship', key)), label, description: null, cardinality, objectType };
  return { objectType: 'meeting', fieldDefinitions, relationshipDefinitions };
}
