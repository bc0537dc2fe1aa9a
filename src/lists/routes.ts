// The seven list endpoints of the contract. Handlers are thin: the pipeline has authenticated,
// checked the version, rate and scopes; schemas have validated; write() makes writes atomic and
// idempotent.
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { write } from '../http/idempotency.ts';
import { type Page, PageQuery } from '../lib/paging.ts';
import { RECORD_DEFS } from '../records/definitions.ts';
import { CreateListBody, EntityEnvelope, IdParams, List, ListEnvelope, ListIdParams, UpdateListBody } from './schemas.ts';
import * as service from './service.ts';

export async function listRoutes(app: FastifyInstance, { config, deps }: PluginOptions): Promise<void> {
  const db = deps.db.kysely;

  app.post(
    '/v1/lists',
    {
      config: { operation: 'createList', scopes: ['lists:create'], category: 'Write', idempotent: true, errors: ['unknown_relationship', 'relationship_entity_missing'] },
      schema: { summary: 'Create a list', tags: ['Lists'], body: CreateListBody, response: { 200: List } },
    },
    async (request, reply) => {
      const body = request.body as service.CreateListInput;
      return write(deps, request, reply, (tx) => service.createList(tx, config, request.principal.workspaceId, body, request.startedAt));
    },
  );

  app.post(
    '/v1/lists/:id',
    {
      config: {
        operation: 'updateList',
        scopes: ['lists:update'],
        category: 'Write',
        idempotent: true,
        errors: ['unknown_relationship', 'relationship_entity_missing', 'conflicting_membership_change'],
      },
      schema: { summary: 'Update a list: rename, add and remove members', tags: ['Lists'], params: IdParams, body: UpdateListBody, response: { 200: List } },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const body = (request.body ?? {}) as service.UpdateListInput;
      return write(deps, request, reply, (tx) => service.updateList(tx, config, request.principal.workspaceId, id, body, request.startedAt));
    },
  );

  app.get(
    '/v1/lists/:id',
    {
      config: { operation: 'getList', scopes: ['lists:read'], category: 'Read' },
      schema: { summary: 'Retrieve a list', tags: ['Lists'], params: IdParams, response: { 200: List } },
    },
    async (request) => service.getList(db, config, request.principal.workspaceId, (request.params as { id: string }).id),
  );

  app.get(
    '/v1/lists',
    {
      config: { operation: 'listLists', scopes: ['lists:read'], category: 'Search' },
      schema: { summary: 'List lists, newest first', tags: ['Lists'], querystring: PageQuery, response: { 200: ListEnvelope } },
    },
    async (request) => service.listLists(db, config, request.principal.workspaceId, request.query as Page),
  );

  for (const def of Object.values(RECORD_DEFS)) {
    const Plural = def.plural[0]?.toUpperCase() + def.plural.slice(1);
    app.get(
      `/v1/lists/:listId/${def.plural}`,
      {
        config: { operation: `listList${Plural}`, scopes: ['lists:read', `${def.plural}:read` as const], category: 'Search' },
        schema: {
          summary: `List the ${def.plural} of a list, newest member first`,
          tags: ['Lists'],
          params: ListIdParams,
          querystring: PageQuery,
          response: { 200: EntityEnvelope },
        },
      },
      async (request) =>
        service.listMembers(db, config, request.principal.workspaceId, (request.params as { listId: string }).listId, def.kind, request.query as Page),
    );
  }
}
