// The eight deletes (docs/trash.md): each moves one record to the trash and answers it as a
// retrieve did just before; a second delete answers the same. Bodies: none or `{}`.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../auth/scopes.ts';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { IdParams, List } from '../lists/schemas.ts';
import { Meeting, MeetingParams } from '../meetings/schemas.ts';
import { SlugIdParams } from '../objects/schemas.ts';
import { deleteObjectRecord } from '../objects/service.ts';
import { RECORD_TYPES } from '../records/service.ts';
import { CustomObjectRecord, RecordSchema, RecordIdParams } from '../records/schemas.ts';
import { DeleteBody } from './schemas.ts';
import { trashList, trashMeeting, trashRecord } from './service.ts';

const config = (operation: string, scope: string) => ({
  operation,
  scopes: [scope as Scope],
  category: 'Write' as const,
  idempotent: true,
  optionalBody: true,
  errors: ['resource_not_found' as const],
});

export async function trashRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { write } = serviceContext(opts);

  for (const type of Object.values(RECORD_TYPES)) {
    const One = type.objectType[0]?.toUpperCase() + type.objectType.slice(1);
    app.delete(
      `/v1/${type.plural}/:id`,
      {
        config: config(`delete${One}`, `${type.plural}:delete`),
        schema: {
          summary: `Move ${type.article} ${type.objectType} to the trash`,
          tags: [type.plural[0]?.toUpperCase() + type.plural.slice(1)],
          params: RecordIdParams,
          body: DeleteBody,
          response: { 200: RecordSchema(type) },
        },
      },
      (request, reply) => write(request, reply, (c) => trashRecord(c, type, request.params)),
    );
  }

  app.delete(
    '/v1/objects/:entitySlug/values/:id',
    {
      config: config('deleteObjectRecord', 'custom_objects:delete'),
      schema: {
        summary: 'Move a record of a custom object type to the trash',
        tags: ['Custom objects'],
        params: SlugIdParams,
        body: DeleteBody,
        response: { 200: CustomObjectRecord },
      },
    },
    (request, reply) => write(request, reply, (c) => deleteObjectRecord(c, request.params)),
  );

  app.delete(
    '/v1/meetings/:id',
    {
      config: config('deleteMeeting', 'meetings:delete'),
      schema: { summary: 'Move a meeting to the trash', tags: ['Meetings'], params: MeetingParams, body: DeleteBody, response: { 200: Meeting } },
    },
    (request, reply) => write(request, reply, (c) => trashMeeting(c, request.params)),
  );

  app.delete(
    '/v1/lists/:id',
    {
      config: config('deleteList', 'lists:delete'),
      schema: { summary: 'Move a list to the trash', tags: ['Lists'], params: IdParams, body: DeleteBody, response: { 200: List } },
    },
    (request, reply) => write(request, reply, (c) => trashList(c, request.params)),
  );
}
