// The merge operations (docs/merge.md): POST /v1/{accounts,contacts,opportunities}/merge,
// POST /v1/objects/{entitySlug}/merge, and GET /v1/merges/{id}. The read needs the read scope of
// the merged type; the handler decides from the key's scopes, before the read, which types it may
// read, and the read finds only merges of those (docs/merge.md).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../auth/scopes.ts';
import { MERGEABLE_TYPES } from '../changes/event-types.ts';
import type { PluginOptions } from '../http/context.ts';
import { challenge } from '../http/bearer.ts';
import { serviceContext } from '../http/service-context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { SlugParams } from '../objects/schemas.ts';
import { mergeObjectRecords } from '../objects/service.ts';
import { RECORD_TYPES } from '../records/service.ts';
import { CustomObjectRecord, RecordSchema } from '../records/schemas.ts';
import { Merge, MergeBody, MergeIdParams, MergeResult } from './schemas.ts';
import type { MergeTypes } from './repository.ts';
import { getMerge, mergeRecords } from './service.ts';

const ERRORS = ['relationship_entity_missing', 'unknown_field', 'read_only_field', 'duplicate_value'] as const;

/**
 * The system types a merge can be of (docs/events.md §Types lists their `<type>.merged`), by the
 * scope that reads them; a custom type's is custom_objects:read.
 */
const MERGED_TYPES = MERGEABLE_TYPES.map((t) => RECORD_TYPES[t]);
const READ_SCOPES: readonly Scope[] = [...MERGED_TYPES.map((t) => `${t.plural}:read` as Scope), 'custom_objects:read'];

/**
 * What a key may read, decided from its scopes alone: null for every type. A key that lacks the read
 * scope of some type gets the same 403 for a merge of that type as for an id that names no merge,
 * so that the answer never tells whether a merge it cannot read exists.
 */
function readable(granted: readonly Scope[] | null): { only: MergeTypes | null; lacking: Scope[] } {
  if (granted === null) return { only: null, lacking: [] };
  const lacking = READ_SCOPES.filter((s) => !granted.includes(s));
  if (lacking.length === 0) return { only: null, lacking };
  const only = {
    types: MERGED_TYPES.filter((t) => granted.includes(`${t.plural}:read` as Scope)).map((t) => t.objectType),
    custom: granted.includes('custom_objects:read'),
  };
  return { only, lacking };
}

export async function mergeRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx, write } = serviceContext(opts);

  for (const type of MERGED_TYPES) {
    const Many = type.plural[0]?.toUpperCase() + type.plural.slice(1);
    const One = type.objectType[0]?.toUpperCase() + type.objectType.slice(1);
    app.post(
      `/v1/${type.plural}/merge`,
      {
        config: {
          operation: `merge${Many}`,
          scopes: [`${type.plural}:update` as Scope, `${type.plural}:delete` as Scope],
          category: 'Write',
          idempotent: true,
          errors: [...ERRORS],
        },
        schema: {
          summary: `Merge two ${type.plural}: the primary keeps its id, the duplicate goes to the trash`,
          tags: [Many],
          body: MergeBody,
          response: { 200: MergeResult(RecordSchema(type), `Merge${One}Result`) },
        },
      },
      (request, reply) => write(request, reply, (c) => mergeRecords(c, type, request.body)),
    );
  }

  app.post(
    '/v1/objects/:entitySlug/merge',
    {
      config: {
        operation: 'mergeObjectValues',
        scopes: ['custom_objects:update', 'custom_objects:delete'],
        category: 'Write',
        idempotent: true,
        errors: [...ERRORS, 'resource_not_found'],
      },
      schema: {
        summary: 'Merge two records of a custom object type',
        tags: ['Custom objects'],
        params: SlugParams,
        body: MergeBody,
        response: { 200: MergeResult(CustomObjectRecord, 'MergeObjectValuesResult') },
      },
    },
    (request, reply) => write(request, reply, (c) => mergeObjectRecords(c, { ...request.params, ...request.body })),
  );

  app.get(
    '/v1/merges/:id',
    {
      // A key that can read no merged type is refused by the pipeline, before the id is validated.
      config: { operation: 'getMerge', scopes: [], anyScopes: READ_SCOPES, category: 'Read', errors: ['resource_not_found', 'insufficient_scope'] },
      schema: { summary: 'Retrieve a merge (needs the read scope of the merged type)', tags: ['Merges'], params: MergeIdParams, response: { 200: Merge } },
    },
    async (request) => {
      const { only, lacking } = readable(request.principal.scopes);
      const refused = () => {
        const message = `This API key lacks the scope${lacking.length > 1 ? 's' : ''} ${lacking.join(' and ')}; reading a merge needs the read scope of its type, and ${request.params.id} is no merge of a type this key can read.`;
        return new AppError('insufficient_scope', message, { headers: challenge('insufficient_scope', message, lacking) });
      };
      const merge = await getMerge(ctx(request), { id: request.params.id, only });
      if (!merge) throw only ? refused() : notFound('merge', request.params.id);
      return merge;
    },
  );
}
