// The MCP endpoint (docs/mcp.md): `/mcp` speaks the Model Context Protocol over Streamable HTTP
// through the official SDK's server, authenticated by the API keys. It runs stateless (the SDK's
// `sessionIdGenerator: undefined`): each POST carries its own JSON-RPC messages and is answered
// with JSON by a server made for it, so any instance of a cluster can answer any request and
// nothing is kept between requests. GET (a stream of server-initiated messages) and DELETE (the
// end of a session) have nothing to serve without sessions: an authenticated one answers 405, as
// the protocol allows. Loaded only when MCP is on (src/app.ts).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Deps, SERVICE_VERSION } from '../http/context.ts';
import { authenticate } from '../http/pipeline.ts';
import { apiCatalogue, type ApiCatalogue } from './catalogue.ts';
import { currentUser } from './current-user.ts';
import { type Dispatched, registerTools, type ToolEnv } from './tools.ts';

const SERVER_INFO = { name: 'rolodex', version: SERVICE_VERSION };
const INSTRUCTIONS =
  'Rolodex is a CRM. Find an operation with search_api_docs, read it with get_api_details, then call it with read_from_rolodex (GET) or write_to_rolodex (POST, DELETE). Field keys and select option ids differ per workspace: read GET /v1/<type>/definitions before writing.';

function webHeaders(request: FastifyRequest): Headers {
  const h = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) h.append(name, v);
  }
  return h;
}

export async function mcpRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
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
        if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
        if (body !== undefined) headers['content-type'] = 'application/json';
        const res = await app.inject({ method, url, headers, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
        return { status: res.statusCode, body: res.payload };
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
    const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS });
    registerTools(server, toolEnv(request));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const web = new Request(new URL(request.url, 'http://mcp.invalid'), { method: 'POST', headers: webHeaders(request) });
      const res = await transport.handleRequest(web, { parsedBody: request.body });
      reply.code(res.status);
      res.headers.forEach((value, name) => void reply.header(name, value));
      return reply.send(res.body ? await res.text() : undefined);
    } finally {
      await server.close();
    }
  }

  app.route({ method: ['POST', 'GET', 'DELETE'], url: '/mcp', schema: { hide: true }, handler: handle });
}
