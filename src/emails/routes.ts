// The four e-mail endpoints (docs/emails.md). Sending answers once the e-mail and its outbox row
// are committed; the dispatcher delivers after. Handlers never log e-mail content.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { PageQuery } from '../lib/paging-schemas.ts';
import { DraftedEmail, DraftEmailBody, Email, EmailList, EmailParams, SendEmailBody, SentEmail } from './schemas.ts';
import * as service from './service.ts';

const tags = ['Emails'];
const attachmentErrors = ['user_required', 'unknown_mailbox', 'referenced_resource_missing', 'file_too_large', 'full_access_required'] as const;

export async function emailRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { ctx, write } = serviceContext(opts);

  app.post(
    '/v1/emails/send',
    {
      config: { operation: 'sendEmail', scopes: ['emails:create'], category: 'Write', idempotent: true, errors: [...attachmentErrors] },
      schema: { summary: 'Send an e-mail from a mailbox of the caller', tags, body: SendEmailBody, response: { 200: SentEmail } },
    },
    (request, reply) => write(request, reply, (c) => service.sendEmail(c, request.body)),
  );

  app.post(
    '/v1/emails/draft',
    {
      config: { operation: 'draftEmail', scopes: ['emails:create'], category: 'Write', idempotent: true, errors: [...attachmentErrors] },
      schema: { summary: 'Store a draft in a mailbox of the caller', tags, body: DraftEmailBody, response: { 200: DraftedEmail } },
    },
    (request, reply) => write(request, reply, (c) => service.draftEmail(c, request.body)),
  );

  app.get(
    '/v1/emails/:id',
    {
      config: { operation: 'getEmail', scopes: ['emails:read'], category: 'Read' },
      schema: { summary: 'Retrieve an e-mail', tags, params: EmailParams, response: { 200: Email } },
    },
    (request) => service.getEmail(ctx(request), request.params),
  );

  app.get(
    '/v1/emails',
    {
      config: { operation: 'listEmails', scopes: ['emails:read'], category: 'Search' },
      schema: { summary: 'List e-mails, newest first', tags, querystring: PageQuery, response: { 200: EmailList } },
    },
    (request) => service.listEmails(ctx(request), request.query),
  );
}
