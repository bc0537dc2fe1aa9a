// GET /v1/messages/{id} and GET /v1/messages (read-only; docs/design.md §Message visibility). Auth
// and scopes are the pipeline's; the handlers pass the caller on and never log message content.
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { type Page, PageQuery } from '../lib/paging.ts';
import { Message, MessageList, MessageParams } from './schemas.ts';
import { getMessage, listMessages } from './service.ts';

export async function messageRoutes(app: FastifyInstance, { config, deps }: PluginOptions): Promise<void> {
  app.get(
    '/v1/messages/:id',
    {
      config: { operation: 'getMessage', scopes: ['messages:read'], category: 'Read' },
      schema: { summary: 'Retrieve a message', tags: ['Messages'], params: MessageParams, response: { 200: Message } },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const p = request.principal;
      return getMessage(deps.db.kysely, config, { workspaceId: p.workspaceId, userId: p.userId }, id);
    },
  );

  app.get(
    '/v1/messages',
    {
      config: { operation: 'listMessages', scopes: ['messages:read'], category: 'Search' },
      schema: { summary: 'List messages visible to the caller, newest first', tags: ['Messages'], querystring: PageQuery, response: { 200: MessageList } },
    },
    async (request) => {
      const p = request.principal;
      const { data, totalCount } = await listMessages(deps.db.kysely, config, { workspaceId: p.workspaceId, userId: p.userId }, request.query as Page);
      return { data, object: 'list' as const, totalCount };
    },
  );
}
