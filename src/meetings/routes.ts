// The four meeting endpoints (docs/meetings.md). Handlers are thin: the pipeline has authenticated,
// checked the version, rate and scopes; schemas have validated; write() makes writes atomic and
// idempotent. Nothing here logs a meeting's description or transcript.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { PageQuery } from '../lib/paging-schemas.ts';
import { Definitions } from '../records/schemas.ts';
import { meetingDefinitions } from './definitions.ts';
import { CreateMeetingBody, Meeting, MeetingList, MeetingParams, UpdateMeetingBody } from './schemas.ts';
import * as service from './service.ts';

export async function meetingRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx, write } = serviceContext(opts);

  app.post(
    '/v1/meetings',
    {
      config: {
        operation: 'createMeeting',
        scopes: ['meetings:create'],
        category: 'Write',
        idempotent: true,
        errors: ['unknown_relationship', 'read_only_relationship', 'relationship_entity_missing', 'full_access_required'],
      },
      schema: { summary: 'Create a past meeting', tags: ['Meetings'], body: CreateMeetingBody, response: { 200: Meeting } },
    },
    (request, reply) => write(request, reply, (c) => service.createMeeting(c, request.body)),
  );

  app.post(
    '/v1/meetings/:id',
    {
      config: {
        operation: 'updateMeeting',
        scopes: ['meetings:update'],
        category: 'Write',
        idempotent: true,
        errors: ['read_only_field', 'unknown_relationship', 'read_only_relationship', 'relationship_entity_missing', 'full_access_required'],
      },
      schema: {
        summary: "Update a meeting's privacy setting or replace its transcript",
        tags: ['Meetings'],
        params: MeetingParams,
        body: UpdateMeetingBody,
        response: { 200: Meeting },
      },
    },
    (request, reply) => write(request, reply, (c) => service.updateMeeting(c, { ...request.params, ...request.body })),
  );

  app.get(
    '/v1/meetings/:id',
    {
      config: { operation: 'getMeeting', scopes: ['meetings:read'], category: 'Read' },
      schema: { summary: 'Retrieve a meeting', tags: ['Meetings'], params: MeetingParams, response: { 200: Meeting } },
    },
    (request) => service.getMeeting(ctx(request), request.params),
  );

  app.get(
    '/v1/meetings',
    {
      config: { operation: 'listMeetings', scopes: ['meetings:read'], category: 'Search' },
      schema: { summary: 'List meetings, newest start first', tags: ['Meetings'], querystring: PageQuery, response: { 200: MeetingList } },
    },
    (request) => service.listMeetings(ctx(request), request.query),
  );

  app.get(
    '/v1/meetings/definitions',
    {
      config: { operation: 'getMeetingDefinitions', scopes: ['meetings:read'], category: 'Read' },
      schema: { summary: 'The field and relationship definitions of meetings', tags: ['Meetings'], response: { 200: Definitions } },
    },
    (request) => meetingDefinitions(ctx(request)),
  );
}
