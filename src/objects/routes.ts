// The custom-object API (docs/activities.md §Custom objects): the workspace's object types, and
// create, update, retrieve, list and definitions of their records over the record engine.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { FilteredPageQuery } from '../records/schemas.ts';
import { Envelope } from '../lib/paging-schemas.ts';
import { CreateBody, CustomObjectRecord, Definitions, UpdateBody, WRITE_ERRORS } from '../records/schemas.ts';
import { FieldHistoryPage, HistoryQuery, ObjectHistoryParams } from '../records/schemas.ts';
import { ObjectTypeList, SlugIdParams, SlugParams } from './schemas.ts';
import * as service from './service.ts';

/** A custom object's write also answers 404 for a type that is not the workspace's. */
const OBJECT_WRITE_ERRORS = ['resource_not_found', ...WRITE_ERRORS] as const;

export async function objectRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx, write } = serviceContext(opts);
  const tags = ['Custom objects'];

  app.get(
    '/v1/objects',
    {
      config: { operation: 'listObjectTypes', scopes: ['custom_objects:read'], category: 'Read' },
      schema: { summary: "The workspace's custom object types, by slug", tags, response: { 200: ObjectTypeList } },
    },
    (request) => service.objectTypes(ctx(request)),
  );

  app.get(
    '/v1/objects/:entitySlug',
    {
      config: { operation: 'listObjectRecords', scopes: ['custom_objects:read'], category: 'Search', errors: ['resource_not_found'] },
      schema: {
        summary: 'List the records of a custom object type, newest first',
        tags,
        params: SlugParams,
        querystring: FilteredPageQuery,
        response: { 200: Envelope(CustomObjectRecord, 'CustomObjectRecordEnvelope') },
      },
    },
    (request) => service.listObjectRecords(ctx(request), { entitySlug: request.params.entitySlug, query: request.query }),
  );

  app.get(
    '/v1/objects/:entitySlug/definitions',
    {
      config: { operation: 'getObjectDefinitions', scopes: ['custom_objects:read'], category: 'Read', errors: ['resource_not_found'] },
      schema: { summary: 'The field and relationship definitions of a custom object type', tags, params: SlugParams, response: { 200: Definitions } },
    },
    (request) => service.objectDefinitions(ctx(request), request.params),
  );

  app.post(
    '/v1/objects/:entitySlug/values',
    {
      config: { operation: 'createObjectRecord', scopes: ['custom_objects:create'], category: 'Write', idempotent: true, errors: [...OBJECT_WRITE_ERRORS] },
      schema: { summary: 'Create a record of a custom object type', tags, params: SlugParams, body: CreateBody, response: { 200: CustomObjectRecord } },
    },
    (request, reply) => write(request, reply, (c) => service.createObjectRecord(c, { ...request.params, ...request.body })),
  );

  app.get(
    '/v1/objects/:entitySlug/values/:id',
    {
      config: { operation: 'getObjectRecord', scopes: ['custom_objects:read'], category: 'Read', errors: ['resource_not_found'] },
      schema: { summary: 'Retrieve a record of a custom object type', tags, params: SlugIdParams, response: { 200: CustomObjectRecord } },
    },
    (request) => service.getObjectRecord(ctx(request), request.params),
  );

  app.get(
    '/v1/objects/:entitySlug/values/:id/fields/:fieldKey/history',
    {
      config: { operation: 'getObjectRecordFieldHistory', scopes: ['custom_objects:read'], category: 'Read', errors: ['resource_not_found', 'unknown_field'] },
      schema: {
        summary: 'The values one field of a custom object record held, newest first',
        tags,
        params: ObjectHistoryParams,
        querystring: HistoryQuery,
        response: { 200: FieldHistoryPage },
      },
    },
    (request) => service.objectFieldHistory(ctx(request), { ...request.params, ...request.query }),
  );

  app.post(
    '/v1/objects/:entitySlug/values/:id',
    {
      config: { operation: 'updateObjectRecord', scopes: ['custom_objects:update'], category: 'Write', idempotent: true, errors: [...OBJECT_WRITE_ERRORS] },
      schema: {
        summary: 'Update the fields and relationships of a record of a custom object type',
        tags,
        params: SlugIdParams,
        body: UpdateBody,
        response: { 200: CustomObjectRecord },
      },
    },
    (request, reply) => write(request, reply, (c) => service.updateObjectRecord(c, { ...request.params, ...request.body })),
  );
}
