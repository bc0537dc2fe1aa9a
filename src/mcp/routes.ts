// The MCP endpoint (docs/mcp.md): `/mcp` speaks the Model Context Protocol over Streamable HTTP
// through the official SDK's server, authenticated by the API keys. It runs stateless: each POST
// carries its own JSON-RPC messages and is answered with JSON (src/mcp/transport.ts), so any
// instance of a cluster can answer any request and nothing of a request outlives it. One server
// (the tools registered on it), connected once to one transport, answers every POST, at once if
// they come at once; an `initialize` is answered by a server and transport of its own that are
// then dropped, so that no server keeps what a client declared of itself (docs/mcp.md §Sessions).
// GET (a stream of server-initiated messages) and DELETE (the end of a session) have nothing to
// serve without sessions: an authenticated one answers 405, as the protocol allows. Loaded only
// when MCP is on (src/app.ts).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Deps, SERVICE_VERSION } from '../http/context.ts';
import { authenticate } from '../http/pipeline.ts';
import { apiCatalogue, type ApiCatalogue } from './catalogue.ts';
import { dispatchInMemory } from './dispatch.ts';
import { currentUser } from './current-user.ts';
import { type Dispatched, registerTools, requestAuth, type ToolEnv } from './tools.ts';
import { EndpointTransport } from './transport.ts';

const SERVER_INFO = { name: 'rolodex', version: SERVICE_VERSION };
const INSTRUCTIONS =
  'Rolodex is a CRM. Find an operation with search_api_docs, read it with get_api_details, then call it with read_from_rolodex (GET) or write_to_rolodex (POST, DELETE). Field keys and select option ids differ per workspace: read GET /v1/<type>/definitions before writing.';

/** Whether the JSON-RPC body holds an `initialize` request. */
function initializes(body: unknown): boolean {
  const one = (m: unknown) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';
  return Array.isArray(body) ? body.some(one) : one(body);
}

export async function mcpRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  // The servers' validator is used only for elicitation answers, which these tools never ask
  // for; one per process spares each server compiling its own.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const newServer = () => {
    const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS, jsonSchemaValidator });
    registerTools(server);
    return server;
  };
  const shared = newServer();
  const sharedTransport = new EndpointTransport();
  await shared.connect(sharedTransport);
  app.addHook('onClose', () => shared.close());
  let catalogue: ApiCatalogue | undefined;
  // The document is complete once the app is ready, which every request comes after.
  const docs = () => (catalogue ??= apiCatalogue(app.swagger() as unknown as Record<string, unknown>));

  function toolEnv(request: FastifyRequest): ToolEnv {
    // The caller's own Authorization header is passed on as it came and never copied elsewhere:
    // every tool call is authenticated again, exactly as the REST call would be.
    const authorization = request.headers.authorization as string;
    return {
      catalogue: docs,
      currentUser: () => currentUser(deps.db.kysely, request.principal),
      requestId: request.id,
      async dispatch({ method, url, body, idempotencyKey }): Promise<Dispatched> {
        const headers: Record<string, string> = { authorization, 'service-version': SERVICE_VERSION };
        if (request.headers.host) headers.host = request.headers.host;
        if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
        if (body !== undefined) headers['content-type'] = 'application/json';
        const socket = request.raw.socket as { remoteAddress?: string; encrypted?: boolean } | undefined;
        return dispatchInMemory(app, {
          method,
          url,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          remoteAddress: socket?.remoteAddress,
          encrypted: socket?.encrypted === true,
        });
      },
    };
  }

  async function handle(request: FastifyRequest, reply: FastifyReply) {
    const waiting = authenticate(deps, request);
    if (waiting) await waiting;
    if (request.method !== 'POST') {
      return reply
        .code(405)
        .header('Allow', 'POST')
        .send({ jsonrpc: '2.0', error: { code: -32000, message: 'This server is stateless: only POST is served.' }, id: null });
    }
    const auth = requestAuth(toolEnv(request), request.principal);
    const answer = initializes(request.body) ? await alone(request, auth) : await sharedTransport.answer(request.body, request.headers, auth);
    reply.code(answer.status);
    return answer.body === undefined ? reply.send() : reply.type('application/json').send(answer.body);
  }

  /** Answers an `initialize` on a server of its own, closed and dropped after it. */
  async function alone(request: FastifyRequest, auth: ReturnType<typeof requestAuth>) {
    const server = newServer();
    const transport = new EndpointTransport();
    await server.connect(transport);
    try {
      return await transport.answer(request.body, request.headers, auth);
    } finally {
      // Closed once the protocol is done with the request (its bookkeeping ends in the microtasks
      // after the answer is handed over), off the answer's path.
      setImmediate(() => {
        server.close().catch((err: unknown) => deps.logger.warn({ err }, 'an MCP server did not close'));
      });
    }
  }

  app.route({ method: ['POST', 'GET', 'DELETE'], url: '/mcp', schema: { hide: true }, handler: handle });
}
