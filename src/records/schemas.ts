import { Type } from '@sinclair/typebox';
import { Fields, Relationships } from '../lib/resource-schemas.ts';

export const Entity = Type.Object(
  {
    id: Type.String(),
    createdAt: Type.String({ description: 'ISO 8601 timestamp' }),
    updatedAt: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 timestamp; may be null' }),
    httpLink: Type.Union([Type.String(), Type.Null()]),
    externalId: Type.Union([Type.String(), Type.Null()], { description: 'External identifier; null if unset.' }),
    fields: Fields,
    relationships: Relationships,
  },
  { $id: 'Entity', additionalProperties: false },
);
