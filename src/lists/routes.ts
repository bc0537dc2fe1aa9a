// The seven list endpoints of the contract. Handlers are thin: the pipeline has authenticated,
// checked the version, rate and scopes; schemas have validated (and type request.params, query and
// body through the TypeBox provider); write() makes writes atomic and idempotent.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import type { Scope } from '../auth/scopes.ts';
import { PageQuery } from '../lib/paging-schemas.ts';
import { RECORD_TYPES } from '../records/service.ts';
import { CreateListBody, RecordEnvelope, IdParams, List, ListEnvelope, ListIdParams, UpdateListBody } from './schemas.ts';
import * as service from './service.ts';

export async function listRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx, write } = serviceContext(opts);

  app.post(
    '/v1/lists',
    {
      config: {
        operation: 'createList',
        scopes: ['lists:create'],
        category: 'Write',
        idempotent: true,
        errors: ['unknown_relationship', 'relationship_entity_missing', 'relationship_entity_inactive'],
      },
      schema: { summary: 'Create a list', tags: ['Lists'], body: CreateListBody, response: { 200: List } },
    },
    (request, reply) => write(request, reply, (c) => service.createList(c, request.body)),
  );

  app.post(
    '/v1/lists/:id',
    {
      config: {
        operation: 'updateList',
        scopes: ['lists:update'],
        category: 'Write',
        idempotent: true,
        errors: ['unknown_relationship', 'relationship_entity_missing', 'relationship_entity_inactive', 'conflicting_membership_change'],
      },
      schema: { summary: 'Update a list: rename, add and remove members', tags: ['Lists'], params: IdParams, body: UpdateListBody, response: { 200: List } },
    },
    (request, reply) => write(request, reply, (c) => service.updateList(c, { ...request.params, ...request.body })),
  );

  app.get(
    '/v1/lists/:id',
    {
      config: { operation: 'getList', scopes: ['lists:read'], category: 'Read' },
      schema: { summary: 'Retrieve a list', tags: ['Lists'], params: IdParams, response: { 200: List } },
    },
    (request) => service.getList(ctx(request), request.params),
  );

  app.get(
    '/v1/lists',
    {
      config: { operation: 'listLists', scopes: ['lists:read'], category: 'Search' },
      schema: { summary: 'List lists, newest first', tags: ['Lists'], querystring: PageQuery, response: { 200: ListEnvelope } },
    },
    (request) => service.listLists(ctx(request), request.query),
  );

  for (const def of Object.values(RECORD_TYPES).filter((t) => t.listable)) {
    const Plural = def.plural[0]?.toUpperCase() + def.plural.slice(1);
    app.get(
      `/v1/lists/:listId/${def.plural}`,
      {
        config: { operation: `listList${Plural}`, scopes: ['lists:read', `${def.plural}:read` as Scope], category: 'Search' },
        schema: {
          summary: `List the ${def.plural} of a list, newest member first`,
          tags: ['Lists'],
          params: ListIdParams,
          querystring: PageQuery,
          response: { 200: RecordEnvelope },
        },
      },
      (request) => service.listMembers(ctx(request), { ...request.params, ...request.query, kind: def.objectType }),
    );
  }
}
