// Sends fuzzed requests through app.inject and judges each answer against the OpenAPI document:
// never a 5xx, always a documented status, content type and body, and a 4xx for every request
// that breaks the documented schemas.
import type { LightMyRequestResponse } from 'fastify';
import { headers, type TestApp } from '../helpers/app.ts';
import { makeAjv, type Operation, type ResponseChecker } from '../helpers/openapi-ops.ts';
import type { FuzzRequest } from '../helpers/schema-arbitrary.ts';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** encodeURIComponent, except that a lone surrogate becomes the (invalid) bytes a careless client would send. */
function encodeLoose(s: string): string {
  let out = '';
  for (const ch of s) out += LONE_SURROGATE.test(ch) ? '%ED%A0%80' : encodeURIComponent(ch);
  return out;
}

export function urlOf(op: Operation, req: FuzzRequest): string {
  const path = req.rawPath ?? op.path.replace(/\{(\w+)\}/g, (_m, n: string) => encodeLoose(req.params[n] ?? ''));
  const qs = req.query.map(([k, v]) => `${encodeLoose(k)}=${encodeLoose(v)}`).join('&');
  return qs ? `${path}?${qs}` : path;
}

function decodedParams(op: Operation, url: string): Record<string, string> | null {
  const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const re = new RegExp(`^${op.path.replace(/\{\w+\}/g, '([^/?]*)')}(?:\\?|$)`);
  const m = re.exec(url);
  if (!m) return null;
  const out: Record<string, string> = {};
  try {
    names.forEach((n, i) => (out[n] = decodeURIComponent(m[i + 1]!)));
  } catch {
    return null;
  }
  return out;
}

export interface Classifier {
  /** True when the request breaks the documented schemas (so it must get a 4xx). */
  invalid(op: Operation, req: FuzzRequest, url: string): boolean;
}

export function classifier(): Classifier {
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  const cache = new Map<string, (v: unknown) => boolean>();
  const compiled = (key: string, ajv: ReturnType<typeof makeAjv>, schema: object) => {
    let v = cache.get(key);
    if (!v) cache.set(key, (v = ajv.compile(schema) as (x: unknown) => boolean));
    return v;
  };
  return {
    invalid(op, req, url) {
      if (req.invalid) return true;
      if (op.body) {
        if (req.body === undefined) {
          if (op.body.required) return true;
        } else if (!compiled(`${op.operationId} body`, strict, op.body.schema)(JSON.parse(JSON.stringify(req.body)))) return true;
      }
      const params = decodedParams(op, url);
      if (params === null) return true;
      if (Object.values(params).some((v) => LONE_SURROGATE.test(v))) return true;
      // A query part that is not percent-encoded UTF-8 is refused as such a path is (docs/errors.md §Query parameters).
      if (req.query.some(([k, v]) => LONE_SURROGATE.test(k) || LONE_SURROGATE.test(v))) return true;
      const paramSchema = {
        type: 'object',
        properties: Object.fromEntries(op.pathParams.map((p) => [p.name, p.schema])),
        required: op.pathParams.map((p) => p.name),
      };
      if (!compiled(`${op.operationId} params`, coercing, paramSchema)({ ...params })) return true;
      // Every operation refuses a query parameter it does not define, one without any included
      // (docs/errors.md §Query parameters).
      const query: Record<string, string | string[]> = {};
      for (const [k, v] of req.query) query[k] = k in query ? ([] as string[]).concat(query[k]!, v) : v;
      // An integer is decimal digits (docs/errors.md §Numbers in query strings): the coercion below would read `+5` or `1e1` as one.
      for (const p of op.query)
        if ((p.schema as { type?: unknown }).type === 'integer' && p.name in query && [query[p.name]].flat().some((v) => !/^(?:\d+|-[1-9]\d*)$/.test(v!)))
          return true;
      const querySchema = {
        type: 'object',
        properties: Object.fromEntries(op.query.map((p) => [p.name, p.schema])),
        required: op.query.filter((p) => p.required).map((p) => p.name),
        additionalProperties: false,
      };
      return !compiled(`${op.operationId} query`, coercing, querySchema)(query);
    },
  };
}

export async function send(t: TestApp, secret: string, op: Operation, req: FuzzRequest, url: string): Promise<LightMyRequestResponse> {
  const extra: Record<string, string> = { ...req.headers };
  let payload: string | Buffer | undefined;
  if (op.method !== 'GET') {
    if (req.raw !== undefined) payload = req.raw;
    else if (req.body !== undefined) payload = JSON.stringify(req.body);
    const ct = req.contentType === undefined ? 'application/json' : req.contentType;
    if (payload !== undefined && ct !== null) extra['content-type'] = ct;
  }
  return t.app.inject({ method: op.method, url, headers: headers(secret, extra), ...(payload === undefined ? {} : { payload }) });
}

export interface Verdict {
  status: number;
  invalid: boolean;
  problem: string | null;
}

export function judge(op: Operation, checker: ResponseChecker, res: LightMyRequestResponse, invalid: boolean): Verdict {
  const status = res.statusCode;
  let problem: string | null = null;
  if (status >= 500) problem = `5xx: ${res.body.slice(0, 500)}`;
  else if (invalid && !(status >= 400 && status < 500)) problem = `a request that breaks the schemas got ${status}`;
  else problem = checker.check(op, { statusCode: status, headers: res.headers, body: res.body });
  return { status, invalid, problem };
}
