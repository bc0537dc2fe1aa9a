// Request and response shapes of the enrichment operations (docs/enrichment.md).
import { Type } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const EntityIdParams = Type.Object({ entityId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
export const RunIdParams = Type.Object({ runId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });

export const EnrichBody = Type.Object(
  {
    fields: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
        maxItems: 50,
        description: 'Field keys to fill; a named field is filled even when it holds a value. Omitted: every fillable field that is empty.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const EnrichmentRun = Type.Object(
  {
    id: Type.String({ description: 'enr_…' }),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    entityId: Type.String(),
    entityType: Type.Union([Type.Literal('account'), Type.Literal('contact')]),
    status: Type.Union(['queued', 'running', 'completed', 'failed', 'timed_out'].map((s) => Type.Literal(s))),
    startedAt: Nullable(Type.String()),
    completedAt: Nullable(Type.String()),
    targetFields: Type.Array(Type.String()),
    trigger: Type.Union([Type.Literal('creation'), Type.Literal('manual')]),
  },
  { additionalProperties: false },
);

export const EnrichAnswer = Type.Object(
  {
    enrichmentRun: Type.Union([EnrichmentRun, Type.Null()]),
    status: Type.Union([Type.Literal('started'), Type.Literal('already_running'), Type.Literal('skipped')]),
    reason: Type.Union([Type.Literal('no_targets'), Type.Literal('no_operations'), Type.Null()]),
  },
  { additionalProperties: false },
);
