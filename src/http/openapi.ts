// The OpenAPI 3.1 document at /openapi.json and the interactive reference at /docs, both made from
// the routes themselves. Everything the pipeline enforces from a route's `config` (operation,
// scopes, rate category, idempotency) is documented here in one place, so a route added later
// gets its operationId, security, headers and error responses without writing any of them.
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifySchema, type RouteOptions } from 'fastify';
import { SERVICE_VERSION } from './context.ts';
import { ERROR_CODES, type ErrorCode, ERROR_TYPES } from '../lib/errors.ts';
import { errorResponse, ErrorBody, RATE_HEADERS, REPLAYED_HEADER } from './openapi-schemas.ts';
import { filterSyntaxText } from '../records/filter/operators.ts';

const DESCRIPTION = `Records, Lists, Messages, Files, Members and Emails.

Every \`/v1\` request sends \`Authorization: Bearer <API_KEY>\` and \`Service-Version: ${SERVICE_VERSION}\`.
\`Lightfield-Version\` is accepted in its place by default (a deployment sets the accepted names
with \`VERSION_HEADERS\`); a response echoes the name a request used.
Each operation lists the scopes it needs (\`x-scopes\`, all of them; \`x-any-scopes\`, any one) and its rate-limit category
(\`x-rate-category\`: Read, Write or Search; per workspace, a token bucket refilling at the
category's quota per second with a burst of one second's quota). Responses to requests the limit
counts (all but 401, 400 \`version_header\` and 404 \`route_not_found\`, answered before it) carry
\`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix seconds); a 429
adds \`Retry-After\`. Listings marked \`x-filters\` take filters in their query string:
\`<key>=<value>\` or \`<key>[<operator>]=<value>\`, \`-\` before an operator to negate it. Errors have one shape: \`{"error": {"type", "code", "message", "param"?, "requestId"}}\`.`;

type Schema = FastifySchema & Record<string, unknown>;

/**
 * The query schema as the document shows it: a parameter with a default is filled in when the
 * request leaves it out, so the client need not send it (the page's `limit` and `offset`). The
 * route's own schema, which validates the request, is left as it is.
 */
function documentedQuery(query: unknown): unknown {
  const q = query as { properties?: Record<string, { default?: unknown }>; required?: string[] } | undefined;
  if (!q?.properties || !Array.isArray(q.required)) return query;
  const required = q.required.filter((name) => q.properties?.[name]?.default === undefined);
  return { ...q, required };
}

/**
 * The error codes a route can answer with, from what it declares. Every operation reads the
 * database (the key's lookup at least), so every one can answer 503 `service_unavailable` when a
 * dependency is unreachable or the server is shutting down (docs/errors.md §Requests in general).
 */
export function routeErrors(route: RouteOptions): ErrorCode[] {
  const c = route.config ?? {};
  const s = (route.schema ?? {}) as Schema;
  const codes: ErrorCode[] = ['missing_api_key', 'invalid_api_key', 'version_header', 'rate_limited', 'internal_error', 'service_unavailable'];
  if ((c.scopes && c.scopes.length > 0) || (c.anyScopes && c.anyScopes.length > 0)) codes.push('insufficient_scope');
  if (s.querystring || s.params) codes.push('invalid_parameter');
  if (s.body) codes.push('invalid_json', 'unknown_field', 'invalid_type', 'parameter_missing', 'invalid_value', 'payload_too_large', 'unsupported_media_type');
  if (route.url.includes(':')) codes.push('resource_not_found');
  if (c.idempotent) codes.push('invalid_idempotency_key', 'idempotency_key_too_long', 'idempotency_conflict', 'idempotency_key_reused');
  for (const code of c.errors ?? []) if (!codes.includes(code)) codes.push(code);
  return codes;
}

function errorResponses(route: RouteOptions): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrors(route)) {
    const status = ERROR_CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) out[String(status)] = errorResponse(status, ERROR_TYPES[status] ?? 'error', codes);
  return out;
}

function headerParams(route: RouteOptions, own: unknown): Record<string, unknown> {
  const props: Record<string, unknown> = {
    'Service-Version': {
      type: 'string',
      enum: [SERVICE_VERSION],
      description: 'The API version; required on every request, under this name or as Lightfield-Version.',
      examples: [SERVICE_VERSION],
    },
  };
  if (route.config?.idempotent) {
    props['Idempotency-Key'] = {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description:
        'Makes a retry safe: the same key and request within 24 hours replays the first successful response (with Idempotent-Replayed: true); a failure stores nothing, so its retry runs again. Another user repeating it gets 422.',
      examples: ['5f0c2b6e-8d4a-4c1e-9b7f-3a2d6e1c0b94'],
    };
  }
  const base = (own ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
  return { type: 'object', properties: { ...base.properties, ...props }, required: [...(base.required ?? []), 'Service-Version'] };
}

function transform({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }) {
  const c = route.config ?? {};
  if (!c.operation) return { schema, url };
  const s = { ...(schema as Schema) };
  const scopes = [...(c.scopes ?? [])];
  const any = c.anyScopes ?? [];
  const needs =
    scopes.length > 0
      ? `Requires scope${scopes.length > 1 ? 's' : ''} ${scopes.map((x) => `\`${x}\``).join(' and ')}.`
      : any.length > 0
        ? `Requires one of the scopes ${any.map((x) => `\`${x}\``).join(' or ')}.`
        : 'Any valid API key.';
  s.operationId = c.operation;
  // A listing whose query takes keys beyond its named ones takes filters (docs/filtering.md);
  // the parameter list cannot say so, so the operation does, for clients and the fuzz, with the
  // syntax in its description: a client that reads one operation (the MCP endpoint's
  // get_api_details, docs/mcp.md) learns from it alone which keys and operators the listing takes.
  const extra = (s.querystring as { additionalProperties?: unknown } | undefined)?.additionalProperties;
  const filters = extra !== undefined && extra !== false;
  s.description = [
    s.description,
    `${needs} Rate category: ${c.category}.${c.idempotent ? ' Honours `Idempotency-Key`.' : ''}`,
    filters ? filterSyntaxText() : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  s.security = [{ bearerAuth: [] }];
  s['x-scopes'] = scopes;
  if (any.length > 0) s['x-any-scopes'] = [...any];
  s['x-rate-category'] = c.category;
  if (c.idempotent) s['x-idempotent'] = true;
  if (c.optionalBody) s[OPTIONAL_BODY] = true;
  if (filters) s['x-filters'] = 'docs/filtering.md';
  if (s.querystring) s.querystring = documentedQuery(s.querystring);
  s.headers = headerParams(route, s.headers);
  const own = (s.response ?? {}) as Record<string, Record<string, unknown>>;
  const success: Record<string, unknown> = {};
  // A replay under an Idempotency-Key is the stored answer of this status, marked as one.
  const successHeaders = c.idempotent ? { ...RATE_HEADERS, ...REPLAYED_HEADER } : RATE_HEADERS;
  for (const [status, body] of Object.entries(own))
    success[status] = status.startsWith('2') ? { ...body, headers: { ...successHeaders, ...(body.headers as object) } } : body;
  s.response = { ...errorResponses(route), ...success };
  return { schema: s, url };
}

type Doc = { tags?: Array<{ name: string }>; paths?: Record<string, Record<string, Record<string, unknown> & { tags?: string[] }>> };

// @fastify/swagger marks every request body required; a route's `optionalBody` reaches the built
// operation under this key, which `withOptionalBodies` turns into `requestBody.required: false`.
const OPTIONAL_BODY = 'x-optional-body';

function withOptionalBodies(doc: Doc): Doc {
  for (const item of Object.values(doc.paths ?? {}))
    for (const op of Object.values(item)) {
      if (op[OPTIONAL_BODY] !== true) continue;
      delete op[OPTIONAL_BODY];
      if (typeof op.requestBody === 'object') op.requestBody = { ...op.requestBody, required: false };
    }
  return doc;
}

/** Tags without operations are left out, so the reference shows no empty sections. */
function withUsedTags(doc: Doc): Doc {
  const used = new Set(Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? [])));
  return { ...doc, tags: (doc.tags ?? []).filter((t) => used.has(t.name)) };
}

export async function installOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Rolodex API', version: SERVICE_VERSION, description: DESCRIPTION },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <API_KEY>`.' } } },
      tags: [
        { name: 'Credential', description: 'The API key itself.' },
        { name: 'Lists', description: 'Named collections of accounts, contacts or opportunities.' },
        { name: 'Messages', description: 'Chat messages, filtered by what the caller may see.' },
        { name: 'Files', description: 'Upload sessions, metadata and downloads.' },
        { name: 'Members', description: "The workspace's users, read-only." },
        { name: 'Emails', description: 'E-mails of the mailboxes operators configure: read, send and draft.' },
      ],
    },
    hideUntagged: false,
    // Shared schemas appear under their own $id (`#/components/schemas/Error`), not `def-N`.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform,
    transformObject: (d) => withUsedTags(withOptionalBodies((d as { openapiObject: Doc }).openapiObject)) as object,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  installReference(app);
}

/** Headers of the reference's own answer that this server's reply sets itself. */
const HOP_HEADERS = new Set(['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'date']);

/**
 * The interactive reference at /docs (Swagger UI with its static files, glob and yaml) is an app of
 * its own, built by the first request under /docs and kept; each request is handed to it in memory.
 * A server that never serves the reference never loads it (docs/performance.md §Loading only what
 * is configured).
 */
function installReference(app: FastifyInstance): void {
  let reference: Promise<FastifyInstance> | undefined;
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    reference ??= referenceApp(app.swagger.bind(app)).catch((err: unknown) => {
      reference = undefined;
      throw err;
    });
    const res = await (await reference).inject({ method: 'GET', url: req.url, headers: req.headers });
    // Only the reference's pages and redirects pass through. A path it lacks or refuses (a `..`,
    // `\` or NUL that its static files turn away with 403 in Fastify's shape) gets this server's
    // own 404, so that every error is in the one shape of docs/errors.md.
    const found = res.statusCode < 400;
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined && !HOP_HEADERS.has(name) && (found || name !== 'content-type')) reply.header(name, value);
    if (!found) return reply.callNotFound();
    reply.code(res.statusCode);
    return res.rawPayload.length > 0 ? reply.send(res.rawPayload) : reply.send();
  };
  app.get('/docs', { schema: { hide: true } }, handler);
  app.get('/docs/*', { schema: { hide: true } }, handler);
}

/** Swagger UI over `spec`, the document of the app it serves. */
async function referenceApp(spec: FastifyInstance['swagger']): Promise<FastifyInstance> {
  const { default: swaggerUi } = await import('@fastify/swagger-ui');
  const app = Fastify();
  // Swagger UI asks for @fastify/swagger by its plugin name: here it is the served app's document.
  const document = Object.assign(
    async (instance: FastifyInstance) => {
      instance.decorate('swagger', spec);
    },
    { [Symbol.for('skip-override')]: true, [Symbol.for('plugin-meta')]: { name: '@fastify/swagger' } },
  );
  await app.register(document);
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The reference must work without the internet: the UI's assets come from this server, and
    // the validator badge (which would call a public service) is off.
    uiConfig: { validatorUrl: null, displayOperationId: true, deepLinking: true, docExpansion: 'list', tryItOutEnabled: false },
    staticCSP: true,
    // The server speaks plain HTTP (TLS ends at a proxy, if any), so the page must load its assets
    // over the scheme it came by: `upgrade-insecure-requests` would send every asset of a page
    // opened at http://<host>:<port>/docs to https and leave it blank. Behind an https proxy the
    // assets are same-origin, so https already (docs/deploy.md §The API reference).
    transformStaticCSP: (header: string) => header.replace(/\s*upgrade-insecure-requests;?/g, ''),
    transformSpecification: (spec) => spec,
    transformSpecificationClone: false,
  });
  await app.ready();
  return app;
}
