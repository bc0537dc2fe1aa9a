// GET /v1/messages/{id} and GET /v1/messages (read-only; docs/design.md §Message visibility). Auth
// and scopes are the pipeline's; the handlers pass the caller on (as the ctx's actor) and never log
// message content.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { PageQuery } from '../lib/paging-schemas.ts';
import { Message, MessageList, MessageParams } from './schemas.ts';
import * as service from './service.ts';

export async function messageRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx } = serviceContext(opts);

  app.get(
    '/v1/messages/:id',
    {
      config: { operation: 'getMessage', scopes: ['messages:read'], category: 'Read' },
      schema: { summary: 'Retrieve a message', tags: ['Messages'], params: MessageParams, response: { 200: Message } },
    },
    (request) => service.getMessage(ctx(request), request.params),
  );

  app.get(
    '/v1/messages',
    {
      config: { operation: 'listMessages', scopes: ['messages:read'], category: 'Search' },
      schema: { summary: 'List messages visible to the caller, newest first', tags: ['Messages'], querystring: PageQuery, response: { 200: MessageList } },
    },
    (request) => service.listMessages(ctx(request), request.query),
  );
}
