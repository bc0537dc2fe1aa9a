// Response shapes shared by several resources: the field value object ({value, valueType}) and
// the relationship object ({cardinality, objectType, values}).
import { Type } from '@sinclair/typebox';

export { VALUE_TYPES, type ValueType } from './value-types.ts';

export const FieldValue = Type.Object(
  {
    // string, number, boolean, string[], Address or FullName object; null when unset. Left open
    // here so that serialization keeps whatever the field holds.
    value: Type.Unknown({ description: 'string, number, boolean, array of string, Address or FullName object; null when unset' }),
    valueType: Type.String({ description: 'The data type of the field (TEXT, NUMBER, ADDRESS, …).' }),
  },
  { additionalProperties: false },
);

export const Fields = Type.Record(Type.String(), FieldValue);

export const Relationship = Type.Object(
  {
    cardinality: Type.Union([Type.Literal('has_one'), Type.Literal('has_many')]),
    objectType: Type.String(),
    values: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export const Relationships = Type.Record(Type.String(), Relationship);
