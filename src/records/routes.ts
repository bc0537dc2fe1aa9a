// The record API (docs/records.md, docs/activities.md): create, update, retrieve, list and
// definitions for accounts, contacts, opportunities, tasks and notes, one set of routes per type
// over the one engine.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import type { Scope } from '../auth/scopes.ts';
import {
  CreateBody,
  CreateBodyWithRelationships,
  Definitions,
  RecordEnvelopeSchema,
  RecordSchema,
  FieldHistoryPage,
  FilteredPageQuery,
  HistoryParams,
  HistoryQuery,
  RecordIdParams,
  UpdateBody,
  UpdateBodyAddRemove,
  WRITE_ERRORS,
} from './schemas.ts';
import { createRecord, RECORD_TYPES, fieldHistory, getDefinitions, getRecord, listRecords, updateRecord } from './service.ts';

/** The system types with field value history (custom objects have theirs under /v1/objects). */
const WITH_HISTORY = new Set(['account', 'contact', 'opportunity']);

export async function recordRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx, write } = serviceContext(opts);

  for (const type of Object.values(RECORD_TYPES)) {
    const { plural, objectType, article } = type;
    const One = objectType[0]?.toUpperCase() + objectType.slice(1);
    const Many = plural[0]?.toUpperCase() + plural.slice(1);
    const tags = [Many];
    const scope = (action: 'create' | 'update' | 'read') => `${plural}:${action}` as Scope;
    const Resource = RecordSchema(type);

    app.post(
      `/v1/${plural}`,
      {
        config: { operation: `create${One}`, scopes: [scope('create')], category: 'Write', idempotent: true, errors: [...WRITE_ERRORS] },
        schema: {
          summary: `Create ${article} ${objectType}`,
          tags,
          body: type.createNeedsRelationships ? CreateBodyWithRelationships : CreateBody,
          response: { 200: Resource },
        },
      },
      (request, reply) => write(request, reply, (c) => createRecord(c, { type, ...request.body })),
    );

    app.post(
      `/v1/${plural}/:id`,
      {
        config: { operation: `update${One}`, scopes: [scope('update')], category: 'Write', idempotent: true, errors: [...WRITE_ERRORS, 'resource_not_found'] },
        schema: {
          summary: `Update the fields and relationships of ${article} ${objectType}`,
          tags,
          params: RecordIdParams,
          body: type.updateOperations === 'addRemove' ? UpdateBodyAddRemove : UpdateBody,
          response: { 200: Resource },
        },
      },
      (request, reply) => write(request, reply, (c) => updateRecord(c, { type, ...request.params, ...request.body })),
    );

    if (type.definitions)
      app.get(
        `/v1/${plural}/definitions`,
        {
          config: { operation: `get${One}Definitions`, scopes: [scope('read')], category: 'Read' },
          schema: { summary: `The field and relationship definitions of ${plural}`, tags, response: { 200: Definitions } },
        },
        (request) => getDefinitions(ctx(request), { type }),
      );

    app.get(
      `/v1/${plural}/:id`,
      {
        config: { operation: `get${One}`, scopes: [scope('read')], category: 'Read', errors: ['resource_not_found'] },
        schema: { summary: `Retrieve ${article} ${objectType}`, tags, params: RecordIdParams, response: { 200: Resource } },
      },
      (request) => getRecord(ctx(request), { type, ...request.params }),
    );

    if (WITH_HISTORY.has(objectType))
      app.get(
        `/v1/${plural}/:id/fields/:fieldKey/history`,
        {
          config: { operation: `get${One}FieldHistory`, scopes: [scope('read')], category: 'Read', errors: ['resource_not_found', 'unknown_field'] },
          schema: {
            summary: `The values one field of ${article} ${objectType} held, newest first`,
            tags,
            params: HistoryParams,
            querystring: HistoryQuery,
            response: { 200: FieldHistoryPage },
          },
        },
        (request) => fieldHistory(ctx(request), { type, ...request.params, ...request.query }),
      );

    app.get(
      `/v1/${plural}`,
      {
        config: { operation: `list${Many}`, scopes: [scope('read')], category: 'Search' },
        schema: { summary: `List ${plural}, newest first`, tags, querystring: FilteredPageQuery, response: { 200: RecordEnvelopeSchema(type, Resource) } },
      },
      (request) => listRecords(ctx(request), { type, query: request.query }),
    );
  }
}
