// The file endpoints of the contract (docs/design.md §Files); the byte endpoints behind uploadUrl
// and download URLs are byte-routes.ts. The module's env (blob store, TTLs, signing secret) is
// bound once here and reaches the services in their ctx.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { serviceContext } from '../http/service-context.ts';
import { PageQuery } from '../lib/paging-schemas.ts';
import { byteRoutes } from './byte-routes.ts';
import { CancelFileBody, CompleteFileBody, CreateFileBody, FileDownloadAddress, FileIdParams, FileList, FileResource, FileUploadSession } from './schemas.ts';
import * as service from './service.ts';

const tags = ['Files'];

export async function fileRoutes(base: FastifyInstance, opts: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const files = service.filesEnv(opts.config, opts.deps.blobs);
  const { ctx, write } = serviceContext(opts, { files });

  app.post(
    '/v1/files',
    {
      config: {
        operation: 'createFile',
        scopes: ['files:create'],
        category: 'Write',
        idempotent: true,
        errors: ['mime_type_not_allowed', 'file_too_large', 'user_required', 'admin_required'],
      },
      schema: { summary: 'Create an upload session', tags, body: CreateFileBody, response: { 200: FileUploadSession } },
    },
    (request, reply) => write(request, reply, (c) => service.createFile(c, request.body)),
  );

  app.post(
    '/v1/files/:id/complete',
    {
      config: {
        operation: 'completeFile',
        scopes: ['files:create'],
        category: 'Write',
        idempotent: true,
        optionalBody: true,
        errors: ['invalid_file_state', 'upload_incomplete', 'checksum_mismatch', 'file_busy'],
      },
      schema: { summary: 'Complete an upload', tags, params: FileIdParams, body: CompleteFileBody, response: { 200: FileResource } },
    },
    async (request, reply) => {
      const input = { id: request.params.id, md5: request.body.md5 };
      // The stored bytes are checked outside the transaction; the commit re-checks that they are
      // still the ones checked, and the whole thing runs again if a new PUT replaced them.
      const retry = new Error('the file changed since it was checked');
      for (let attempt = 0; attempt < 5; attempt++) {
        const check = await service.checkCompletion(ctx(request), input);
        try {
          return await write(request, reply, async (c) => {
            const done = await service.commitCompletion(c, check);
            if (!done) throw retry;
            return done;
          });
        } catch (err) {
          // Any other failure leaves the copy to the sweeper: only a retry is sure it was not adopted.
          if (err !== retry) throw err;
          await service.dropCheck(ctx(request), check);
        }
      }
      throw service.busy();
    },
  );

  app.post(
    '/v1/files/:id/cancel',
    {
      config: {
        operation: 'cancelFile',
        scopes: ['files:create'],
        category: 'Write',
        idempotent: true,
        optionalBody: true,
        errors: ['invalid_file_state', 'file_busy'],
      },
      schema: { summary: 'Cancel an upload', tags, params: FileIdParams, body: CancelFileBody, response: { 200: FileResource } },
    },
    async (request, reply) => {
      let garbage: string | null = null;
      const file = await write(request, reply, async (c) => {
        const out = await service.cancelFile(c, request.params);
        garbage = out.garbage;
        return out.file;
      });
      // Deleted once the cancellation is committed, never before.
      if (garbage) await service.collect(ctx(request), { blobKey: garbage });
      return file;
    },
  );

  app.get(
    '/v1/files/:id',
    {
      config: { operation: 'getFile', scopes: ['files:read'], category: 'Read' },
      schema: { summary: 'Retrieve a file', tags, params: FileIdParams, response: { 200: FileResource } },
    },
    (request) => service.getFile(ctx(request), request.params),
  );

  app.get(
    '/v1/files',
    {
      config: { operation: 'listFiles', scopes: ['files:read'], category: 'Search' },
      schema: { summary: 'List files', tags, querystring: PageQuery, response: { 200: FileList } },
    },
    (request) => service.listFiles(ctx(request), request.query),
  );

  app.get(
    '/v1/files/:id/url',
    {
      config: { operation: 'getFileUrl', scopes: ['files:read'], category: 'Read', errors: ['full_access_required', 'invalid_file_state'] },
      schema: { summary: 'Get a temporary download address', tags, params: FileIdParams, response: { 200: FileDownloadAddress } },
    },
    (request) => service.downloadAddress(ctx(request), request.params),
  );

  await base.register(byteRoutes(files, opts.metrics), opts);
}
