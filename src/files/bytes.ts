// The byte endpoints behind uploadUrl and download URLs. They take no API key (the signed token in
// the path is the capability) and are not JSON: a content-type parser of their own, in this
// encapsulated plugin, hands the raw request stream to the upload handler.
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import type { FilesEnv } from './service.ts';
import { openDownload, receiveUpload } from './transfer.ts';

export function byteRoutes(env: () => FilesEnv) {
  return async (app: FastifyInstance, _opts: PluginOptions): Promise<void> => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    app.put<{ Params: { token: string } }>(
      '/uploads/:token',
      { schema: { hide: true } as object, bodyLimit: Number.MAX_SAFE_INTEGER },
      async (request, reply) => {
        // Through a pass-through: when the size guard stops the transfer, the pipeline destroys
        // its source, and that must not be the socket, which still has to carry the 413.
        const raw = (request.body as Readable | undefined) ?? request.raw;
        const body = new PassThrough();
        raw.pipe(body);
        raw.once('error', (err) => body.destroy(err));
        raw.once('aborted', () => body.destroy(Object.assign(new Error('request aborted'), { code: 'ECONNRESET' })));
        const length = request.headers['content-length'];
        try {
          const result = await receiveUpload(env(), request.params.token, body, length === undefined ? undefined : Number(length), Date.now());
          reply.header('etag', `"${result.md5}"`);
          return result;
        } catch (err) {
          // Whatever the client is still sending is not wanted: answer, then close the connection.
          raw.unpipe(body);
          if (!request.raw.complete) reply.header('connection', 'close');
          throw err;
        }
      },
    );

    app.get<{ Params: { token: string } }>('/downloads/:token', { schema: { hide: true } as object }, async (request, reply) => {
      const header = (name: string) => {
        const v = request.headers[name];
        return typeof v === 'string' ? v : undefined;
      };
      const d = await openDownload(env(), request.params.token, header('range'), header('if-range'), Date.now());
      reply.code(d.status).headers(d.headers);
      return reply.send(d.body);
    });
  };
}
