// The MCP endpoint's servers (docs/mcp.md): the official SDK's server with the tools registered on
// it, connected once to one transport that answers every POST, at once if they come at once; an
// `initialize` is answered by a server and transport of its own that are then dropped, so that no
// server keeps what a client declared of itself (docs/mcp.md §Sessions). Loaded with the first
// request to /mcp (src/mcp/routes.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { InitializeRequestSchema, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { maxHeaderSize } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { MAX_BODY_DEPTH } from '../http/body.ts';
import { deeperThan } from '../lib/json-depth.ts';
import { type Deps, SERVICE_VERSION } from '../http/context.ts';
import { headersTooLarge } from '../http/client-error.ts';
import { asAppError } from '../http/error-handler.ts';
import { isKeptNumber } from '../lib/json-numbers.ts';
import { rateLimited } from '../http/pipeline.ts';
import { apiCatalogue, type ApiCatalogue } from './catalogue.ts';
import { dispatchInMemory } from './dispatch.ts';
import { currentUser } from './current-user.ts';
import { CAPABILITIES, checkedRequest, type Dispatched, registerTools, requestAuth, type ToolEnv } from './tools.ts';
import { EndpointTransport, received } from './transport.ts';

const SERVER_INFO = { name: 'rolodex', version: SERVICE_VERSION };
const INSTRUCTIONS =
  'Rolodex is a CRM. Find an operation with search_api_docs, read it with get_api_details, then call it with read_from_rolodex (GET) or write_to_rolodex (POST, DELETE). Field keys and select option ids differ per workspace: read GET /v1/<type>/definitions before writing.';

const Initialize = z.looseObject({ method: z.literal('initialize') });

/**
 * The answer to an `initialize`, as the SDK's server gives it (the client's version when it is
 * one the SDK speaks, else the latest), but for a request whose params the protocol does not
 * take, which is -32602 rather than the SDK's -32603 (checkedRequest). Nothing the client says of
 * itself is kept (docs/mcp.md §Sessions).
 */
function initialized(request: { method: string }) {
  const asked = checkedRequest(InitializeRequestSchema, request).params.protocolVersion;
  const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
  return { protocolVersion, capabilities: CAPABILITIES ?? {}, serverInfo: SERVER_INFO, instructions: INSTRUCTIONS };
}

/** Whether the JSON-RPC body holds an `initialize` request. */
function initializes(body: unknown): boolean {
  const one = (m: unknown) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';
  return Array.isArray(body) ? body.some(one) : one(body);
}

/**
 * `value` with its arrays and objects below `levels` levels emptied; recursion bounded by `levels`.
 * A number kept as its source text is a number, kept as it is.
 */
function cut(value: unknown, levels: number): unknown {
  if (value === null || typeof value !== 'object' || isKeptNumber(value)) return value;
  if (Array.isArray(value)) return levels === 0 ? [] : value.map((v: unknown) => cut(v, levels - 1));
  // fromEntries defines each key as its own property, `__proto__` as well, which the API refuses.
  return levels === 0 ? {} : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v, levels - 1)]));
}

/**
 * A tool's body as the JSON text of its REST call. A body deeper than the API takes
 * (docs/errors.md) is sent cut one level below the limit: the API refuses it for its depth as it
 * would the whole, which may be too deep to serialize at all.
 */
function bodyText(body: unknown): string {
  return JSON.stringify(deeperThan(body, MAX_BODY_DEPTH) ? cut(body, MAX_BODY_DEPTH) : body);
}

/**
 * The bytes of the request line and headers an HTTP client sends for this request, as Node's
 * parser counts them against its limit; the Content-Length that MemoryRequest adds included.
 */
function headBytes(method: string, url: string, headers: Record<string, string>, text: string | undefined): number {
  let n = Buffer.byteLength(`${method} ${url} HTTP/1.1\r\n`);
  for (const [name, value] of Object.entries(headers)) n += Buffer.byteLength(`${name}: ${value}\r\n`);
  return text === undefined ? n : n + `content-length: ${Buffer.byteLength(text)}\r\n`.length;
}

export interface McpEndpoint {
  /** The answer to an authenticated POST of JSON-RPC messages. */
  answer(request: FastifyRequest, tooLarge?: number): Promise<{ status: number; body?: unknown }>;
  close(): Promise<void>;
}

export async function mcpEndpoint(app: FastifyInstance, deps: Deps): Promise<McpEndpoint> {
  // The servers' validator is used only for elicitation answers, which these tools never ask
  // for; one per process spares each server compiling its own.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const newServer = () => {
    const server = new Server(SERVER_INFO, { instructions: INSTRUCTIONS, jsonSchemaValidator, capabilities: CAPABILITIES });
    registerTools(server);
    server.setRequestHandler(Initialize, initialized);
    return server;
  };
  const shared = newServer();
  const sharedTransport = new EndpointTransport();
  await shared.connect(sharedTransport);
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
      async spend(category, tool) {
        const decision = await deps.rateLimiter?.consume(request.principal.workspaceId, category);
        if (!decision || decision.allowed) return;
        deps.metrics?.rateLimited.inc({ operation: tool, category });
        throw rateLimited(category, decision);
      },
      failure: (err) => asAppError(err, request),
      requestId: request.id,
      async dispatch({ method, url, body, idempotencyKey }): Promise<Dispatched> {
        const headers: Record<string, string> = { authorization, 'service-version': SERVICE_VERSION };
        if (request.headers.host) headers.host = request.headers.host;
        if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
        const text = body === undefined ? undefined : bodyText(body);
        if (text !== undefined) headers['content-type'] = 'application/json';
        // The REST call is the HTTP request: one whose request line and headers Node's parser
        // would refuse never reaches the API (docs/errors.md §Before routing), here either.
        if (headBytes(method, url, headers, text) > maxHeaderSize) throw headersTooLarge();
        const socket = request.raw.socket as { remoteAddress?: string; encrypted?: boolean } | undefined;
        return dispatchInMemory(app, {
          method,
          url,
          headers,
          body: text,
          remoteAddress: socket?.remoteAddress,
          encrypted: socket?.encrypted === true,
          httpVersion: request.raw.httpVersion === '1.0' ? '1.0' : '1.1',
        });
      },
    };
  }

  /** Answers an `initialize` on a server of its own, closed and dropped after it. */
  async function alone(request: FastifyRequest, body: unknown, auth: ReturnType<typeof requestAuth>) {
    const server = newServer();
    const transport = new EndpointTransport();
    await server.connect(transport);
    try {
      return await transport.answer(body, request.headers, auth);
    } finally {
      // Closed once the protocol is done with the request (its bookkeeping ends in the microtasks
      // after the answer is handed over), off the answer's path.
      setImmediate(() => {
        server.close().catch((err: unknown) => deps.logger.warn({ err }, 'an MCP server did not close'));
      });
    }
  }

  return {
    async answer(request, tooLarge) {
      // The route hands on the bytes as received, or the limit they went over (src/mcp/routes.ts).
      const got = received(tooLarge ?? (request.body as Buffer | undefined), request.headers);
      if ('refusal' in got) return got.refusal;
      const auth = requestAuth(toolEnv(request), request.principal);
      return initializes(got.body) ? await alone(request, got.body, auth) : await sharedTransport.answer(got.body, request.headers, auth);
    },
    close: () => shared.close(),
  };
}
