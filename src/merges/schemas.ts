// Request and response shapes of merges (docs/merge.md).
import { type TSchema, Type } from '@sinclair/typebox';

const Id = Type.String({ minLength: 1, maxLength: 255 });

const Resolution = Type.Union([Type.Literal('primary'), Type.Literal('duplicate'), Type.Object({ value: Type.Unknown() }, { additionalProperties: false })]);

export const MergeBody = Type.Object(
  {
    primaryId: Id,
    duplicateId: Id,
    fieldResolutions: Type.Optional(Type.Record(Type.String(), Resolution)),
    options: Type.Optional(Type.Object({ multiSelectUnion: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const Status = Type.Union([Type.Literal('cleanup_pending'), Type.Literal('done'), Type.Literal('failed')]);

export const MergeResult = (Primary: TSchema, name: string) =>
  Type.Object(
    {
      merge: Type.Object({ id: Type.String(), status: Status }, { additionalProperties: false }),
      primary: Primary,
      summary: Type.Object(
        { fieldWriteCount: Type.Integer(), syncRepointedCount: Type.Integer(), warnings: Type.Array(Type.String()) },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false, $id: name },
  );

export const Merge = Type.Object(
  {
    id: Type.String(),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    entityType: Type.String(),
    primaryId: Type.String(),
    duplicateId: Type.String(),
    status: Status,
  },
  { additionalProperties: false, $id: 'Merge' },
);

export const MergeIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
