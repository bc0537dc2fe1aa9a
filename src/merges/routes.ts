// The merge operations (docs/merge.md): POST /v1/{accounts,contacts,opportunities}/merge,
// POST /v1/objects/{entitySlug}/merge, and GET /v1/merges/{id}. The read needs the read scope of
// the merged type, known only once the merge is read: the handler checks it.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../auth/scopes.ts';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { AppError } from '../lib/errors.ts';
import { SlugParams } from '../objects/schemas.ts';
import { mergeObjectRecords } from '../objects/service.ts';
import { ENTITY_TYPES } from '../records/entities.ts';
import { CustomObjectRecord, EntitySchema } from '../records/entity-schemas.ts';
import { Merge, MergeBody, MergeIdParams, MergeResult } from './schemas.ts';
import { getMerge, mergeRecords } from './service.ts';

const ERRORS = ['relationship_entity_missing', 'unknown_field', 'read_only_field', 'duplicate_value'] as const;

/** The scope that reads records of a merged type. */
function readScope(entityType: string): Scope {
  return (Object.hasOwn(ENTITY_TYPES, entityType) ? `${ENTITY_TYPES[entityType as keyof typeof ENTITY_TYPES].plural}:read` : 'custom_objects:read') as Scope;
}

export async function mergeRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx, write } = serviceContext(opts);

  for (const type of [ENTITY_TYPES.account, ENTITY_TYPES.contact, ENTITY_TYPES.opportunity]) {
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
          response: { 200: MergeResult(EntitySchema(type), `Merge${One}Result`) },
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
      config: { operation: 'getMerge', scopes: [], category: 'Read', errors: ['resource_not_found', 'insufficient_scope'] },
      schema: { summary: 'Retrieve a merge (needs the read scope of the merged type)', tags: ['Merges'], params: MergeIdParams, response: { 200: Merge } },
    },
    async (request) => {
      const merge = await getMerge(ctx(request), request.params);
      const needed = readScope(merge.entityType);
      const granted = request.principal.scopes;
      if (granted !== null && !granted.includes(needed))
        throw new AppError('insufficient_scope', `This API key lacks the scope ${needed} needed to read a merge of ${merge.entityType} records.`);
      return merge;
    },
  );
}
