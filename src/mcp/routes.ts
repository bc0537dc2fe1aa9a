// The MCP endpoint (docs/mcp.md): `/mcp` speaks the Model Context Protocol over Streamable HTTP
// through the official SDK's server, authenticated by the API keys. It runs stateless: each POST
// carries its own JSON-RPC messages and is answered with JSON (src/mcp/transport.ts), so any
// instance of a cluster can answer any request and nothing of a request outlives it. GET (a stream
// of server-initiated messages) and DELETE (the end of a session) have nothing to serve without
// sessions: an authenticated one answers 405, as the protocol allows, and so does any other method
// but OPTIONS, as the SDK's transport answers them (docs/mcp.md §Methods). Registered only when MCP is
// on (src/app.ts); the SDK and the servers (src/mcp/endpoint.ts) load with the first authenticated
// POST, so that a process nobody asks for MCP does not hold them.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../http/context.ts';
import { keepConnection } from '../http/error-handler.ts';
import { authenticate } from '../http/pipeline.ts';
import { webOrigin } from '../lib/origin.ts';
import type { McpEndpoint } from './endpoint.ts';

/**
 * The largest body `/mcp` reads: the SDK's transport's (its DEFAULT_MAX_REQUEST_BODY_SIZE, 4 MiB),
 * not the API's 1 MiB, so that a client the SDK serves is served here too (docs/mcp.md §Sessions).
 */
export const MCP_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * The refusal of a request whose `Origin` is not one a browser may call from (docs/mcp.md
 * §Origins), as the SDK's transport words it with its DNS rebinding protection on; undefined for
 * an allowed one and for none at all (a client that is no browser sends none). A DNS rebinding
 * attack has a page of another site call this server by that site's host name, so the Host header
 * agrees with the page; only the Origin header tells the two apart.
 */
export function originRefusal(origin: string | undefined, allowed: readonly string[] | 'any') {
  if (origin === undefined || allowed === 'any') return undefined;
  const spelled = webOrigin(origin);
  if (spelled !== undefined && allowed.includes(spelled)) return undefined;
  return { jsonrpc: '2.0', error: { code: -32000, message: `Invalid Origin header: ${origin}` }, id: null };
}

/** The methods `/mcp` serves, as its `Allow` header names them (docs/mcp.md §Methods). */
const MCP_ALLOW = 'OPTIONS, POST';

/** The answer to a method `/mcp` does not serve, in JSON-RPC as the SDK's transport words it. */
const NOT_ALLOWED = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless and serves POST only.' }, id: null };

export async function mcpRoutes(app: FastifyInstance, opts: { deps: Deps; origins: readonly string[] | 'any' }): Promise<void> {
  const { deps, origins } = opts;
  let endpoint: Promise<McpEndpoint> | undefined;
  const loaded = () =>
    (endpoint ??= import('./endpoint.ts')
      .then((m) => m.mcpEndpoint(app, deps))
      .catch((err: unknown) => {
        // The next request tries again rather than failing for the life of the process.
        endpoint = undefined;
        throw err;
      }));
  app.addHook('onClose', async () => {
    if (endpoint) await (await endpoint).close();
  });

  // The body reaches the endpoint as the bytes received, whatever its Content-Type: the endpoint
  // checks the type and parses the JSON as the SDK's transport does, and answers a bad one in
  // JSON-RPC (docs/mcp.md §Sessions). The API's JSON parser (src/http/body.ts) is not this
  // route's: its checks of NUL characters, depth and `__proto__` keys belong to the REST call a
  // tool makes, which answers them as a tool error (docs/mcp.md §Tools).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  async function handle(request: FastifyRequest, reply: FastifyReply) {
    const answer = await (await loaded()).answer(request);
    reply.code(answer.status);
    return answer.body === undefined ? reply.send() : reply.type('application/json').send(answer.body);
  }

  app.route({
    // Every method, so that one not served is told so (405 with Allow), not that no route is here.
    method: app.supportedMethods,
    url: '/mcp',
    schema: { hide: true },
    bodyLimit: MCP_BODY_LIMIT,
    // The origin, then the key, then the method, are checked before any byte of the body is read.
    onRequest: async (request, reply) => {
      const refused = originRefusal(request.headers.origin, origins);
      if (refused) return reply.code(403).type('application/json').send(refused);
      // A browser's CORS preflight carries no credentials: OPTIONS is answered without the key, and
      // with no CORS headers, which a proxy in front adds (docs/mcp.md §Origins).
      if (request.method === 'OPTIONS') return reply.code(204).header('Allow', MCP_ALLOW).send();
      const waiting = authenticate(deps, request);
      if (waiting) await waiting;
      if (request.method !== 'POST') return reply.code(405).header('Allow', MCP_ALLOW).type('application/json').send(NOT_ALLOWED);
    },
    // A body over the limit is answered as the SDK's transport answers it; any other error goes to
    // the API's error handler.
    errorHandler: (err: FastifyError, request, reply) => {
      if (err.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw err;
      // The rest of the body is read and dropped within bounds, not reset under the client.
      keepConnection(request, reply);
      void loaded()
        .then((endpoint) => endpoint.answer(request, MCP_BODY_LIMIT))
        .then(
          (answer) => reply.code(answer.status).type('application/json').send(answer.body),
          (failed: unknown) => reply.send(failed),
        );
    },
    handler: handle,
  });
}
