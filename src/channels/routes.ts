// GET /v1/channels and GET /v1/channels/{id} (read-only; docs/messages.md §Channels). Auth and
// scopes are the pipeline's; the caller travels as the ctx's actor, whose visibility the SQL applies.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { PageQuery } from '../lib/paging-schemas.ts';
import { Channel, ChannelList, ChannelParams } from './schemas.ts';
import * as service from './service.ts';

export async function channelRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx } = serviceContext(opts);
  const tags = ['Channels'];

  app.get(
    '/v1/channels/:id',
    {
      config: { operation: 'getChannel', scopes: ['channels:read'], category: 'Read' },
      schema: { summary: 'Retrieve a channel', tags, params: ChannelParams, response: { 200: Channel } },
    },
    (request) => service.getChannel(ctx(request), request.params),
  );

  app.get(
    '/v1/channels',
    {
      config: { operation: 'listChannels', scopes: ['channels:read'], category: 'Search' },
      schema: { summary: 'List the channels visible to the caller, newest first', tags, querystring: PageQuery, response: { 200: ChannelList } },
    },
    (request) => service.listVisibleChannels(ctx(request), request.query),
  );
}
