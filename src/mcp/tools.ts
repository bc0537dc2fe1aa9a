// The five tools of the MCP endpoint (docs/mcp.md §Tools). Two read the API's description, one
// names the caller, and two are the API itself: `read_from_rolodex` and `write_to_rolodex` send
// the request they describe through the server's own pipeline (`dispatch`), so a tool call is
// the REST call with its scopes, rate limits, idempotency, validation and errors. A failed call
// is a tool error whose text is the API's JSON error object.
//
// The tools are registered once per server, and a server answers many requests, at once
// (src/mcp/routes.ts), so nothing of a request is held by a tool: each call finds its request's
// ToolEnv through the AuthInfo the SDK hands to the handler (`extra.authInfo`), which the request
// made for itself (`requestAuth`). A call whose AuthInfo is not one of those fails.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
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

function refused(env: ToolEnv, err: unknown): CallToolResult {
  if (!(err instanceof PathRefused)) throw err;
  const error = {
    type: 'bad_request',
    code: 'invalid_parameter',
    message: `The path is not allowed: ${err.message}.`,
    param: 'path',
    requestId: env.requestId,
  };
  return text(JSON.stringify({ error }), true);
}

async function send(env: ToolEnv, input: Parameters<ToolEnv['dispatch']>[0]): Promise<CallToolResult> {
  const res = await env.dispatch(input);
  const ok = res.status >= 200 && res.status < 300;
  return text(res.body === '' ? JSON.stringify({ status: res.status }) : res.body, !ok);
}

const SEARCH_INPUT = {
  query: z.string().max(500).describe('Words to look for; empty lists every operation'),
  limit: z.number().int().min(1).max(200).optional(),
};
const DETAILS_INPUT = {
  operationId: z.string().max(200).optional(),
  method: z.enum(['GET', 'POST', 'DELETE']).optional(),
  path: z.string().max(500).optional().describe('The documented path, e.g. /v1/accounts/{id}'),
};
// The query and the body go on to the REST call as they came: a record schema would copy them
// and drop a `__proto__` key that the API refuses (docs/mcp.md §Tools). Each is checked as it
// is and described as the record it is.
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';
const isQuery = (v: unknown) => isObject(v) && Object.values(v).every((x) => x === null || isScalar(x) || (Array.isArray(x) && x.every(isScalar)));
const SCALAR = { type: ['string', 'number', 'boolean'] };
const Query = z
  .unknown()
  .refine(isQuery, { message: 'Invalid input: expected an object of strings, numbers, booleans, null or arrays of them' })
  .meta({
    type: 'object',
    propertyNames: { type: 'string' },
    additionalProperties: { anyOf: [SCALAR, { type: 'null' }, { type: 'array', items: SCALAR }] },
  });
const Body = z
  .unknown()
  .refine(isObject, { message: 'Invalid input: expected object' })
  .meta({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} });
const READ_INPUT = { path: z.string().max(8192).describe('A path under /v1, optionally with ?query'), query: Query.optional() };
const WRITE_INPUT = {
  method: z.enum(['POST', 'DELETE']).optional().describe('POST unless given'),
  path: z.string().max(8192),
  body: Body.optional(),
  idempotencyKey: z.string().min(1).max(255).optional(),
};

export function registerTools(server: McpServer): void {
  server.registerTool(
    'get_current_user',
    {
      description: 'Who the API key acts as: the member (id, name, email, role) or, for a workspace key, the workspace; with the scopes the key holds.',
      annotations: { readOnlyHint: true },
    },
    async (extra) => json(await envOf(extra).currentUser()),
  );

  server.registerTool(
    'search_api_docs',
    {
      description:
        'Find API operations by words (e.g. "create contact", "list members"). Returns method, path, operationId and summary of each match; call get_api_details for one of them.',
      inputSchema: SEARCH_INPUT,
      annotations: { readOnlyHint: true },
    },
    async ({ query, limit }, extra) =>
      json(
        envOf(extra)
          .catalogue()
          .search(query, limit ?? 25),
      ),
  );

  server.registerTool(
    'get_api_details',
    {
      description:
        'One API operation in full: parameters, request body schema, response schemas, required scopes and rate category. Name it by operationId, or by method and path as search_api_docs returned them.',
      inputSchema: DETAILS_INPUT,
      annotations: { readOnlyHint: true },
    },
    async (input, extra) => {
      const env = envOf(extra);
      const details = env.catalogue().details(input);
      if (details) return json(details);
      const error = { type: 'not_found', code: 'resource_not_found', message: 'No such operation; search_api_docs lists them.', requestId: env.requestId };
      return text(JSON.stringify({ error }), true);
    },
  );

  server.registerTool(
    'read_from_rolodex',
    {
      description:
        'Send a GET request to the API, e.g. path "/v1/accounts" with query {"limit": 25, "$name[startsWith]": "acme"}. Only paths under /v1. Returns the JSON response; an error comes back as the JSON error object.',
      inputSchema: READ_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ path, query }, extra) => {
      const env = envOf(extra);
      let url: string;
      try {
        url = apiTarget(path, query as Record<string, QueryValue> | undefined);
      } catch (err) {
        return refused(env, err);
      }
      return send(env, { method: 'GET', url });
    },
  );

  server.registerTool(
    'write_to_rolodex',
    {
      description:
        'Send a POST (create, update) or DELETE request to the API under /v1 with a JSON body. Give an idempotencyKey to make a retry safe. Read the operation with get_api_details first: field keys and option ids are per workspace.',
      inputSchema: WRITE_INPUT,
      annotations: { destructiveHint: true, openWorldHint: false },
    },
    async ({ method, path, body, idempotencyKey }, extra) => {
      const env = envOf(extra);
      let url: string;
      try {
        url = apiTarget(path);
      } catch (err) {
        return refused(env, err);
      }
      return send(env, { method: method ?? 'POST', url, body, idempotencyKey });
    },
  );

  // The tools are fixed, and a stateless endpoint has no stream to announce a change on, so the
  // server does not claim `tools.listChanged` (the SDK declares it once a tool is registered).
  server.server.registerCapabilities({ tools: { listChanged: false } });
}
