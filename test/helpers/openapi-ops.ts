// The operations of the served OpenAPI document, in a form the adversarial tests can drive: each
// with its scopes, parameters and body schema (references inlined), and a check that a response
// is one the document promises (status, content type, schema, and for errors a declared code).
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { ERROR_CODES } from '../../src/lib/errors.ts';
import type { TestApp } from './app.ts';

const Ajv = ((AjvModule as any).default ?? AjvModule) as typeof AjvModule.default;
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as typeof addFormatsModule.default;

export type JsonSchema = Record<string, any>;

export interface Param {
  name: string;
  schema: JsonSchema;
  /** Required and without a default. */
  required: boolean;
}

export interface Operation {
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** OpenAPI path, e.g. /v1/lists/{id}. */
  path: string;
  scopes: string[];
  idempotent: boolean;
  pathParams: Param[];
  query: Param[];
  body: { schema: JsonSchema; required: boolean } | null;
  responses: Record<string, { schema: JsonSchema | null; contentType: string | null; codes: string[] }>;
}

function deref(doc: any, value: any, seen: string[] = []): any {
  if (Array.isArray(value)) return value.map((v) => deref(doc, v, seen));
  if (value === null || typeof value !== 'object') return value;
  if (typeof value.$ref === 'string') {
    const ref: string = value.$ref;
    if (seen.includes(ref)) throw new Error(`recursive schema ${ref}`);
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((o: any, k: string) => o?.[k], doc);
    if (!target) throw new Error(`unresolved ${ref}`);
    return deref(doc, target, [...seen, ref]);
  }
  const out: Record<string, any> = {};
  for (const [k, v] of Object.entries(value)) if (k !== '$id') out[k] = deref(doc, v, seen);
  return out;
}

export async function loadDocument(t: TestApp): Promise<any> {
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /openapi.json: ${res.statusCode}`);
  return res.json();
}

export function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, raw] of Object.entries<any>(item)) {
      const op = deref(doc, raw);
      const params = (op.parameters ?? []) as Array<{ in: string; name: string; schema: JsonSchema; required?: boolean }>;
      const pick = (where: string) =>
        params.filter((p) => p.in === where).map((p) => ({ name: p.name, schema: p.schema, required: Boolean(p.required) && p.schema.default === undefined }));
      const json = op.requestBody?.content?.['application/json'];
      const responses: Operation['responses'] = {};
      for (const [status, r] of Object.entries<any>(op.responses ?? {})) {
        const [contentType, media] = (Object.entries<any>(r.content ?? {})[0] ?? [null, null]) as [string | null, any];
        responses[status] = { schema: media?.schema ?? null, contentType, codes: Object.keys(media?.examples ?? {}) };
      }
      ops.push({
        operationId: op.operationId,
        method: method.toUpperCase() as Operation['method'],
        path,
        scopes: op['x-scopes'] ?? [],
        idempotent: op['x-idempotent'] === true,
        pathParams: pick('path'),
        query: pick('query'),
        body: json ? { schema: json.schema, required: Boolean(op.requestBody.required) } : null,
        responses,
      });
    }
  }
  return ops.sort((a, b) => a.operationId.localeCompare(b.operationId));
}

/**
 * The operation a request goes to: same method, same number of segments, every literal segment
 * equal; where two fit (`/v1/accounts/definitions` and `/v1/accounts/{id}`), the one with more
 * literal segments, as the router chooses.
 */
export function operationFor(ops: readonly Operation[], method: string, url: string): Operation {
  const segments = (url.split('?')[0] as string).split('/');
  let best: Operation | undefined;
  let bestLiterals = -1;
  for (const op of ops) {
    const template = op.path.split('/');
    if (op.method !== method || template.length !== segments.length) continue;
    const literals = template.filter((t) => !/^\{\w+\}$/.test(t));
    if (!template.every((t, i) => /^\{\w+\}$/.test(t) || t === segments[i])) continue;
    if (literals.length > bestLiterals) [best, bestLiterals] = [op, literals.length];
  }
  if (!best) throw new Error(`no operation for ${method} ${url}`);
  return best;
}

export function urlFor(op: Operation, params: Record<string, string>, query: Record<string, string | string[]> = {}): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`${op.operationId}: no value for {${name}}`);
    return encodeURIComponent(v);
  });
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of Array.isArray(v) ? v : [v]) qs.append(k, one);
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

/** Validators with the server's own settings: bodies strict, path and query coerced from text. */
export function makeAjv(coerce: boolean) {
  const ajv = new Ajv({ coerceTypes: coerce, useDefaults: coerce, removeAdditional: false, allErrors: false, strict: false });
  addFormats(ajv);
  return ajv;
}

export interface ResponseChecker {
  /** Why the response breaks the document, or null when it keeps to it. */
  check(op: Operation, res: { statusCode: number; headers: Record<string, unknown>; body: string }): string | null;
}

export function responseChecker(): ResponseChecker {
  const ajv = makeAjv(false);
  const cache = new Map<string, ValidateFunction>();
  return {
    check(op, res) {
      const doc = op.responses[String(res.statusCode)];
      if (!doc) return `status ${res.statusCode} is not documented for ${op.operationId} (documented: ${Object.keys(op.responses).join(', ')})`;
      if (!doc.contentType) return null;
      const raw = res.headers['content-type'];
      const ct = typeof raw === 'string' ? raw : '';
      if (!ct.startsWith(doc.contentType)) return `content-type "${ct}", documented "${doc.contentType}"`;
      let body: unknown;
      try {
        body = JSON.parse(res.body);
      } catch {
        return `body is not JSON: ${res.body.slice(0, 200)}`;
      }
      const key = `${op.operationId} ${res.statusCode}`;
      let v = cache.get(key);
      if (!v && doc.schema) cache.set(key, (v = ajv.compile(doc.schema)));
      if (v && !v(body)) return `body does not match the ${res.statusCode} schema: ${ajv.errorsText(v.errors)}; body ${res.body.slice(0, 300)}`;
      if (res.statusCode >= 400) {
        const err = (body as { error: { code: string; requestId: string } }).error;
        if ((ERROR_CODES as Record<string, number>)[err.code] !== res.statusCode)
          return `error code ${err.code} is not catalogued with status ${res.statusCode}`;
        if (doc.codes.length > 0 && !doc.codes.includes(err.code))
          return `error code ${err.code} is not documented for ${op.operationId} ${res.statusCode} (${doc.codes.join(', ')})`;
        if (err.requestId !== res.headers['x-request-id']) return 'error requestId differs from X-Request-Id';
      }
      return null;
    },
  };
}
