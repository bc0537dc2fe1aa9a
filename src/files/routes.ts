import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { write } from '../http/idempotency.ts';
import { PageQuery } from '../lib/paging.ts';
import { byteRoutes } from './byte-routes.ts';
import { CancelFileBody, CompleteFileBody, CreateFileBody, FileDownloadAddress, FileIdParams, FileList, FileResource, FileUploadSession } from './schemas.ts';
import { busy, cancelFile, checkCompletion, collect, commitCompletion, createFile, downloadAddress, type FilesEnv, getFile, listFiles } from './service.ts';

const tags = ['Files'];

export async function fileRoutes(base: FastifyInstance, { config, deps }: PluginOptions): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const env = (): FilesEnv => ({ config, db: deps.db, blobs: deps.blobs });

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
    async (request, reply) => write(deps, request, reply, (tx) => createFile(tx, env(), request.principal, request.body, request.startedAt)),
  );

  app.post(
    '/v1/files/:id/complete',
    {
      config: { operation: 'completeFile', scopes: ['files:create'], category: 'Write', idempotent: true, errors: ['invalid_file_state', 'upload_incomplete', 'checksum_mismatch'] },
      schema: { summary: 'Complete an upload', tags, params: FileIdParams, body: CompleteFileBody, response: { 200: FileResource } },
    },
    async (request, reply) => {
      const md5 = request.body?.md5;
      const ws = request.principal.workspaceId;
      // The stored bytes are checked outside the transaction; the commit re-checks that they are
      // still the ones checked, and the whole thing runs again if a new PUT replaced them.
      for (let attempt = 0; attempt < 5; attempt++) {
        const now = Date.now();
        const check = await checkCompletion(env(), ws, request.params.id, md5, now);
        const RETRY = Symbol('retry');
        try {
          return await write(deps, request, reply, async (tx) => {
            const done = await commitCompletion(tx, check, now);
            if (!done) throw RETRY;
            return done;
          });
        } catch (err) {
          if (err !== RETRY) throw err;
        }
      }
      throw busy();
    },
  );

  app.post(
    '/v1/files/:id/cancel',
    {
      config: { operation: 'cancelFile', scopes: ['files:create'], category: 'Write', idempotent: true, errors: ['invalid_file_state'] },
      schema: { summary: 'Cancel an upload', tags, params: FileIdParams, body: CancelFileBody, response: { 200: FileResource } },
    },
    async (request, reply) => {
      const now = Date.now();
      let garbage: string | null = null;
      const file = await write(deps, request, reply, async (tx) => {
        const out = await cancelFile(tx, env(), request.principal.workspaceId, request.params.id, now);
        garbage = out.garbage;
        return out.file;
      });
      // Deleted once the cancellation is committed, never before.
      if (garbage) await collect(env(), garbage, Date.now());
      return file;
    },
  );

  app.get(
    '/v1/files/:id',
    {
      config: { operation: 'getFile', scopes: ['files:read'], category: 'Read' },
      schema: { summary: 'Retrieve a file', tags, params: FileIdParams, response: { 200: FileResource } },
    },
    async (request) => getFile(deps.db.kysely, request.principal.workspaceId, request.params.id, Date.now()),
  );

  app.get(
    '/v1/files',
    {
      config: { operation: 'listFiles', scopes: ['files:read'], category: 'Search' },
      schema: { summary: 'List files', tags, querystring: PageQuery, response: { 200: FileList } },
    },
    async (request) => listFiles(deps.db.kysely, request.principal.workspaceId, request.query, Date.now()),
  );

  app.get(
    '/v1/files/:id/url',
    {
      config: { operation: 'getFileUrl', scopes: ['files:read'], category: 'Read', errors: ['invalid_file_state'] },
      schema: { summary: 'Get a temporary download address', tags, params: FileIdParams, response: { 200: FileDownloadAddress } },
    },
    async (request) => downloadAddress(env(), request.principal.workspaceId, request.params.id, Date.now()),
  );

  await base.register(byteRoutes(env), { config, deps });
}
