// The byte endpoints behind uploadUrl and download URLs. They take no API key (the signed token in
// the path is the capability) and are not JSON: a content-type parser of their own, in this
// encapsulated plugin, hands the raw request stream to the upload handler.
import { type Readable, Transform } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PluginOptions } from '../http/context.ts';
import { severalLines } from '../http/field-lines.ts';
import { linger } from '../http/linger.ts';
import { type Metrics, recordUpload } from '../metrics/registry.ts';
import { logMissing } from './missing.ts';
import { reclaimer } from './reclaim.ts';
import type { FilesEnv, FilesSystemCtx } from './service.ts';
import { openDownload, receiveUpload } from './transfer.ts';

/** `files`: the module's env, bound once by routes.ts. No API key here, so the ctx has no actor. */
export function byteRoutes(files: FilesEnv, metrics: Metrics) {
  return async (app: FastifyInstance, opts: PluginOptions): Promise<void> => {
    const db = opts.deps.db.kysely;
    const ctx = (request: FastifyRequest): FilesSystemCtx => ({ db, now: request.startedAt, files });
    app.removeAllContentTypeParsers();
    // The body is the request stream itself (or absent): uploads are streamed, never parsed.
    app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    app.put<{ Params: { token: string }; Body: Readable | undefined }>(
      '/uploads/:token',
      { schema: { hide: true }, bodyLimit: Number.MAX_SAFE_INTEGER },
      async (request, reply) => {
        // Through a stream of its own: when the size guard stops the transfer, the pipeline
        // destroys its source, and that must not be the socket, which still has to carry the 413.
        // The pipe is the socket's only reader, so the socket stops being read as soon as that
        // stream is gone: any other listener on the socket would keep it flowing while the
        // refusal is prepared, reading and dropping what a fast client sends meanwhile.
        const raw = request.body ?? request.raw;
        const reclaim = reclaimer();
        const body = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            reclaim(chunk.length);
            done(null, chunk);
          },
        });
        raw.pipe(body);
        raw.once('error', (err) => body.destroy(err));
        raw.once('aborted', () => body.destroy(Object.assign(new Error('request aborted'), { code: 'ECONNRESET' })));
        const length = request.headers['content-length'];
        const contentRange = request.headers['content-range'];
        const started = performance.now();
        try {
          const result = await receiveUpload(ctx(request), {
            token: request.params.token,
            body,
            declaredLength: length === undefined ? undefined : Number(length),
            contentRange,
            contentType: request.headers['content-type'],
            severalContentTypes: severalLines(request.raw.rawHeaders, 'content-type'),
          });
          recordUpload(metrics, result.sizeBytes, (performance.now() - started) / 1000, files.blobs.kind);
          reply.header('etag', `"${result.md5}"`);
          return result;
        } catch (err) {
          raw.unpipe(body);
          if (!request.raw.complete) linger(raw, request.raw.socket);
          throw err;
        }
      },
    );

    // HEAD is a route of its own: Fastify's implicit one would run the GET and read the whole blob
    // only to drop it.
    app.route<{ Params: { token: string } }>({
      method: ['GET', 'HEAD'],
      url: '/downloads/:token',
      schema: { hide: true },
      handler: async (request, reply) => {
        const header = (name: string) => {
          const v = request.headers[name];
          return typeof v === 'string' ? v : undefined;
        };
        const head = request.method === 'HEAD';
        const input = {
          token: request.params.token,
          range: header('range'),
          ifRange: header('if-range'),
          ifMatch: header('if-match'),
          ifUnmodifiedSince: header('if-unmodified-since'),
          head,
        };
        const d = await openDownload(ctx(request), input).catch((err: unknown) => logMissing(request.log, err));
        reply.code(d.status).headers(d.headers);
        if (!d.body) return reply.send();
        const reclaim = reclaimer();
        d.body.on('data', (chunk: Buffer) => reclaim(chunk.length));
        return reply.send(d.body);
      },
    });
  };
}
