// The two member endpoints (docs/design.md §Members): retrieve and list, read-only.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { PageQuery } from '../lib/paging-schemas.ts';
import { Member, MemberEnvelope, MemberIdParams } from './schemas.ts';
import * as service from './service.ts';

export async function memberRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx } = serviceContext(opts);
  const tags = ['Members'];

  app.get(
    '/v1/members/:id',
    {
      config: { operation: 'getMember', scopes: ['members:read'], category: 'Read' },
      schema: { summary: 'Retrieve a member', tags, params: MemberIdParams, response: { 200: Member } },
    },
    (request) => service.getMember(ctx(request), request.params),
  );

  app.get(
    '/v1/members',
    {
      config: { operation: 'listMembers', scopes: ['members:read'], category: 'Search' },
      schema: { summary: 'List the members of the workspace, newest first', tags, querystring: PageQuery, response: { 200: MemberEnvelope } },
    },
    (request) => service.listMembers(ctx(request), request.query),
  );
}
