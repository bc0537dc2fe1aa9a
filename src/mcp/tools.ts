// The five tools of the MCP endpoint (docs/mcp.md §Tools). Two read the API's description, one
// names the caller, and two are the API itself: `read_from_rolodex` and `write_to_rolodex` send
// the request they describe through the server's own pipeline (`dispatch`), so a tool call is
// the REST call with its scopes, rate limits, idempotency, validation and errors.
//
// Every failure of a call is a tool error whose text is the API's JSON error object, its own
// checks' too: the arguments are checked here as the API checks a request body (src/http/
// validation.ts), and the three tools that are no API call spend a token of the workspace's Read
// bucket first, as a REST read would. The SDK's server carries the protocol; the tools' two
// requests, tools/list and tools/call, are answered by the handlers set here.
//
// The tools are set once per server, and a server answers many requests, at once
// (src/mcp/routes.ts), so nothing of a request is held by a tool: each call finds its request's
// ToolEnv through the AuthInfo the SDK hands to the handler (`extra.authInfo`), which the request
// made for itself (`requestAuth`). A call whose AuthInfo is not one of those fails.
import type { Server, ServerOptions } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { type CallToolRequest, type CallToolResult, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import * as z from 'zod';
import { bodyCheck } from '../http/validation.ts';
import { AppError } from '../lib/errors.ts';
import { firstKeptNumber, isKeptNumber, shownLiteral } from '../lib/json-numbers.ts';
import type { RateCategory } from '../rate-limit/bucket.ts';
import type { ApiCatalogue } from './catalogue.ts';
import { apiTarget, PathRefused, type QueryValue } from './paths.ts';

export interface Dispatched {
  status: number;
  /** The response body as sent (JSON for every /v1 answer), '' when there is none. */
  body: string;
}

/** What a tool call needs from the request that carries it. */
export interface ToolEnv {
  catalogue(): ApiCatalogue;
  /** Sends one API request as the caller (their key and the version header). */
  dispatch(input: { method: 'GET' | 'POST' | 'DELETE'; url: string; body?: unknown; idempotencyKey?: string | undefined }): Promise<Dispatched>;
  currentUser(): Promise<Record<string, unknown>>;
  /** Spends a token of the workspace's bucket of `category` for `tool`; throws the REST 429 when none is left. */
  spend(category: RateCategory, tool: string): Promise<void>;
  /** The API's error for a failure of the call (logged when it is not the caller's fault). */
  failure(err: unknown): AppError;
  /** The id of the MCP request, quoted by the errors made here. */
  requestId: string;
}

const ENVS = new WeakMap<AuthInfo, ToolEnv>();

/** The AuthInfo of one MCP request, which leads its tool calls to `env` (and to nothing else). */
export function requestAuth(env: ToolEnv, key: { keyId: string; scopes: readonly string[] | null }): AuthInfo {
  const info: AuthInfo = { token: '', clientId: key.keyId, scopes: [...(key.scopes ?? [])] };
  ENVS.set(info, env);
  return info;
}

function envOf(extra: { authInfo?: AuthInfo | undefined }): ToolEnv {
  const env = extra.authInfo && ENVS.get(extra.authInfo);
  if (!env) throw new Error('a tool call outside an authenticated MCP request');
  return env;
}

const text = (t: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });
const json = (v: unknown): CallToolResult => text(JSON.stringify(v));

async function send(env: ToolEnv, input: Parameters<ToolEnv['dispatch']>[0]): Promise<CallToolResult> {
  const res = await env.dispatch(input);
  const ok = res.status >= 200 && res.status < 300;
  return text(res.body === '' ? JSON.stringify({ status: res.status }) : res.body, !ok);
}

/** The request target of a path a tool was given, or the refusal of the path (docs/mcp.md §What a tool can reach). */
function target(path: string, query?: Record<string, QueryValue>): string {
  try {
    return apiTarget(path, query);
  } catch (err) {
    if (!(err instanceof PathRefused)) throw err;
    throw new AppError('invalid_parameter', `The path is not allowed: ${err.message}.`, { param: 'path' });
  }
}

// The arguments' schemas are JSON Schema, listed as each tool's inputSchema and checked as a body
// is. The query and the body are checked as they are, never copied, and go on to the REST call as
// they came: a `__proto__` key too, which the API refuses (docs/mcp.md §Tools). A body is not
// walked at all: what is inside it is the REST call's to judge.
const Scalars = [Type.String(), Type.Number(), Type.Boolean()];
const Query = Type.Unsafe<Record<string, QueryValue>>(
  Type.Object(
    {},
    { additionalProperties: Type.Union([...Scalars, Type.Null(), Type.Array(Type.Union(Scalars))]), description: 'Query parameters; an array repeats its key' },
  ),
);
const Body = Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'The JSON body' });
const oneOf = <const T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
const closed = { additionalProperties: false };

interface ToolDef<S extends TSchema> {
  name: string;
  description: string;
  input: S;
  annotations: Tool['annotations'];
  /** The bucket a call spends, for a tool that is no API call: an API call spends its operation's. */
  category?: RateCategory;
  run(args: Static<S>, env: ToolEnv): CallToolResult | Promise<CallToolResult>;
}

/** A tool of the table, its arguments' check compiled once. */
function tool<S extends TSchema>(def: ToolDef<S>) {
  return { ...def, check: bodyCheck(def.input) };
}

/**
 * The operation get_api_details names: by operationId, else by path, with the method needed only
 * when several operations share the path. A call that names none is bad input, never "not found";
 * so is an operationId beside the path or method of another operation, which names two.
 */
function detailsOf(catalogue: ApiCatalogue, input: { operationId?: string; method?: string; path?: string }) {
  const notFound = () => new AppError('resource_not_found', 'No such operation; search_api_docs lists them.');
  if (input.operationId !== undefined) {
    const details = catalogue.details({ operationId: input.operationId });
    if (!details) throw notFound();
    for (const param of ['path', 'method'] as const)
      if (input[param] !== undefined && input[param] !== details[param]) {
        const is = `${String(details.operationId)} is ${String(details.method)} ${String(details.path)}`;
        throw new AppError('invalid_value', `${is}, not the ${param} given: name one operation.`, { param });
      }
    return details;
  }
  if (input.path === undefined)
    throw new AppError('parameter_missing', 'Name the operation: its operationId, or its path (and method) as search_api_docs returned them.', {
      param: input.method === undefined ? 'operationId' : 'path',
    });
  const methods = catalogue.methods(input.path);
  if (input.method === undefined && methods.length > 1)
    throw new AppError('parameter_missing', `${input.path} has the methods ${methods.join(', ')}: name one as method.`, { param: 'method' });
  const details = catalogue.details({ path: input.path, method: input.method ?? methods[0] });
  if (!details) throw notFound();
  return details;
}

const TOOLS = [
  tool({
    name: 'get_current_user',
    description:
      'Who the API key acts as: the member (id, name as its known firstName and lastName or null, email, role) or, for a workspace key, the workspace; with the scopes the key holds.',
    input: Type.Object({}, closed),
    annotations: { readOnlyHint: true },
    category: 'Read',
    run: async (_args, env) => json(await env.currentUser()),
  }),
  tool({
    name: 'search_api_docs',
    description:
      'Find API operations by words (e.g. "create contact", "list members"), or list them all without words. Returns method, path, operationId and summary of each match (call get_api_details for one of them), and under valueFormats how a field value of each matching valueType is written (e.g. "phone number format", "address").',
    input: Type.Object(
      {
        query: Type.Optional(Type.String({ maxLength: 500, description: 'Words to look for; absent or empty lists every operation' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'At most this many; by default 25 for words, all for none' })),
      },
      closed,
    ),
    annotations: { readOnlyHint: true },
    category: 'Read',
    run: ({ query, limit }, env) => json(env.catalogue().search(query ?? '', limit)),
  }),
  tool({
    name: 'get_api_details',
    description:
      'One API operation in full: path and query parameters, request body schema and whether a body is required, response schemas, required scopes (all of scopes, or one of anyOfScopes) and rate category, and whether it takes an idempotencyKey. Name it by operationId, or by path as search_api_docs returned it (with the method when several share the path).',
    input: Type.Object(
      {
        operationId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        method: Type.Optional(oneOf(['GET', 'POST', 'DELETE'])),
        path: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'The documented path, e.g. /v1/accounts/{id}' })),
      },
      closed,
    ),
    annotations: { readOnlyHint: true },
    category: 'Read',
    run: (input, env) => json(detailsOf(env.catalogue(), input)),
  }),
  tool({
    name: 'read_from_rolodex',
    description:
      'Send a GET request to the API, e.g. path "/v1/accounts" with query {"limit": 25, "$name[startsWith]": "acme"}. Only paths under /v1. Returns the JSON response; an error comes back as the JSON error object.',
    input: Type.Object(
      { path: Type.String({ maxLength: 8192, description: 'A path under /v1, optionally with ?query' }), query: Type.Optional(Query) },
      closed,
    ),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: ({ path, query }, env) => send(env, { method: 'GET', url: target(path, query) }),
  }),
  tool({
    name: 'write_to_rolodex',
    description:
      'Send a POST (create, update) or DELETE request to the API under /v1 with a JSON body. Give an idempotencyKey to make a retry safe. Read the operation with get_api_details first: field keys and option ids are per workspace.',
    input: Type.Object(
      {
        method: Type.Optional(oneOf(['POST', 'DELETE'], 'POST unless given')),
        path: Type.String({ maxLength: 8192 }),
        body: Type.Optional(Body),
        idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      },
      closed,
    ),
    annotations: { destructiveHint: true, openWorldHint: false },
    run: ({ method, path, body, idempotencyKey }, env) => send(env, { method: method ?? 'POST', url: target(path), body, idempotencyKey }),
  }),
];

const BY_NAME = new Map<string, (typeof TOOLS)[number]>(TOOLS.map((t) => [t.name, t]));
const LISTED = { tools: TOOLS.map(({ name, description, input, annotations }): Tool => ({ name, description, inputSchema: input, annotations })) };

/**
 * A number of the arguments that a double does not hold as written (docs/errors.md §Numbers in
 * bodies) arrives as its source text (src/mcp/transport.ts). In `body` it stays so, for the REST
 * call to refuse as it refuses it in any body; a `query` value becomes that text, which the query
 * string carries as the agent wrote it, for the REST call to judge. Any other argument becomes the
 * number JSON.parse makes of it, for the tool's check to judge its type and range as a body's
 * (`"path": 1e400` is `invalid_type`); the refusal of the literal itself is returned for an
 * argument that check would let pass.
 */
function literalNumbers(args: Record<string, unknown>): AppError | undefined {
  let unheld: AppError | undefined;
  for (const [name, value] of Object.entries(args)) {
    if (isKeptNumber(value)) {
      const reason = firstKeptNumber(value)!.reason;
      unheld ??= new AppError('invalid_value', `"${name}" (${shownLiteral(value.rawJSON)}) ${reason}.`, { param: name });
      args[name] = Number(value.rawJSON);
      continue;
    }
    if (name !== 'query' || value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    const query = value as Record<string, unknown>;
    for (const [key, v] of Object.entries(query)) {
      if (isKeptNumber(v)) query[key] = v.rawJSON;
      else if (Array.isArray(v)) v.forEach((x: unknown, i) => isKeptNumber(x) && (v[i] = x.rawJSON));
    }
  }
  return unheld;
}

/** One call of a known tool: the bucket first (as REST checks the rate limit before the request), then the arguments, then the tool. */
async function callTool(env: ToolEnv, { name, arguments: args = {} }: CallToolRequest['params']): Promise<CallToolResult> {
  // A name that is no tool is a protocol error, as MCP words it, not a tool's failure: no tool ran
  // (docs/mcp.md §Tools).
  const tool = BY_NAME.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${JSON.stringify(name)}; tools/list lists the tools.`);
  try {
    if (tool.category) await env.spend(tool.category, name);
    const unheld = literalNumbers(args);
    const refused = tool.check(args) ?? unheld;
    if (refused) throw refused;
    return await tool.run(args, env);
  } catch (err) {
    return text(JSON.stringify(env.failure(err).body(env.requestId)), true);
  }
}

// The protocol layer reads a tools/call request by its method only: the SDK's server then checks
// it whole against its CallToolRequestSchema and answers a malformed one (no `params`, `arguments`
// that is not an object) -32602, invalid params, where a full schema here would make the protocol
// layer answer it -32603, an internal error.
const ToolCall = z.looseObject({ method: z.literal('tools/call') });

/**
 * A handler's request as `schema` reads it. The protocol layer's own check of a request that a
 * handler's schema refuses answers -32603, an internal error; a request the protocol does not take
 * is the client's fault, so it is answered -32602, invalid params, worded as the SDK's server words
 * a malformed tools/call (docs/mcp.md §Sessions). Each handler is set with a schema that reads the
 * method only (as ToolCall) and checks its request here.
 */
export function checkedRequest<T>(schema: z.ZodType<T>, request: { method: string }): T {
  const read = schema.safeParse(request);
  if (!read.success) throw new McpError(ErrorCode.InvalidParams, `Invalid ${request.method} request: ${read.error.message}`);
  return read.data;
}

const ToolList = z.looseObject({ method: z.literal('tools/list') });

/** The tools are fixed, and a stateless endpoint has no stream to announce a change on. */
export const CAPABILITIES: ServerOptions['capabilities'] = { tools: { listChanged: false } };

/** Answers tools/list and tools/call on `server`, which declares CAPABILITIES. */
export function registerTools(server: Server): void {
  server.setRequestHandler(ToolList, (request) => {
    checkedRequest(ListToolsRequestSchema, request);
    return LISTED;
  });
  // The request reaches this handler only once the SDK's server has checked it against
  // CallToolRequestSchema (see ToolCall).
  server.setRequestHandler(ToolCall, (request, extra) => callTool(envOf(extra), (request as unknown as CallToolRequest).params));
}
