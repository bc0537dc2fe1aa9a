// Request and response shapes of field value history (docs/history.md).
import { Type } from '@sinclair/typebox';

const Id = Type.String({ minLength: 1, maxLength: 255 });
const FieldKey = Type.String({ minLength: 1, maxLength: 255, description: 'A field key of the type (`$stage`, `tier`).' });

export const HistoryParams = Type.Object({ id: Id, fieldKey: FieldKey }, { additionalProperties: false });

export const ObjectHistoryParams = Type.Object(
  { entitySlug: Type.String({ minLength: 1, maxLength: 255, description: 'The slug of a custom object type.' }), id: Id, fieldKey: FieldKey },
  { additionalProperties: false },
);

export const HistoryQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'The `nextCursor` of the previous page.' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100.' }),
  },
  { additionalProperties: false },
);

export const FieldHistoryPage = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          value: Type.Unknown({ description: 'The value the field held, as a retrieve returns it; null when unset.' }),
          valueType: Type.String({ description: 'The data type of the field.' }),
          displayValue: Type.Union([Type.String(), Type.Null()], { description: 'The value as a person reads it; null when unset.' }),
          recordedAt: Type.String({ format: 'date-time', description: 'When the field took this value.' }),
          isCreate: Type.Boolean({ description: 'Whether this is the value the record was created with.' }),
        },
        { additionalProperties: false },
      ),
    ),
    hasMore: Type.Boolean(),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `after` for the next page; null on the last page.' }),
  },
  { $id: 'FieldHistoryPage', additionalProperties: false },
);
