// fast-check arbitraries made from the OpenAPI document: requests that keep to an operation's
// schemas, and mutations of them that break the schemas in the ways clients and attackers do.
import fc from 'fast-check';
import type { JsonSchema, Operation } from './openapi-ops.ts';

export interface FuzzRequest {
  params: Record<string, string>;
  /** Raw query pairs (repeated names allowed). */
  query: Array<[string, string]>;
  /** undefined: no body; a string: sent as is (broken JSON). */
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string | null;
  headers?: Record<string, string>;
  /** A path already encoded by the mutation (invalid percent-encoding and such). */
  rawPath?: string;
  /** Set by mutations whose invalidity is not a matter of the schemas (broken JSON, bad bytes). */
  invalid?: boolean;
}

/** Values likely to pass the service's rules, by property name: they reach deeper code than random text. */
const HINTS: Record<string, unknown[]> = {
  $objectType: ['account', 'contact', 'opportunity', '$contact', 'Account'],
  $name: ['Q1 targets', '  padded  ', 'x'],
  // Date-times the impossibleDate mutation can turn into dates that do not exist.
  $startDate: ['2026-01-05T09:00:00Z'],
  $endDate: ['2026-01-05T10:00:00+01:00'],
  $dueAt: ['2026-12-01T09:00:00Z'],
  filename: ['report.pdf', 'notes.txt', 'a'],
  mimeType: ['text/plain', 'application/pdf', 'image/png', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  sizeBytes: [1, 10, 1024, 536_870_912, 536_870_913],
  // The canary owner's FUZZ_MAILBOX (test/helpers/canary.ts), so that valid sends get through.
  from: ['fuzz@canary.test', 'FUZZ@Canary.Test'],
  to: [['a@example.test'], ['b@example.test', 'c@example.test']],
  cc: [[], ['d@example.test']],
  bcc: [[], ['e@example.test']],
  subject: ['Hello', ''],
  limit: [1, 25],
  offset: [0, 1, 1000],
};

export function valueArb(schema: JsonSchema, ids: string[], name?: string, depth = 0): fc.Arbitrary<unknown> {
  const base = plainArb(schema, ids, depth);
  const hints = name ? HINTS[name] : undefined;
  return hints ? fc.oneof({ arbitrary: fc.constantFrom(...hints), weight: 2 }, { arbitrary: base, weight: 1 }) : base;
}

function plainArb(schema: JsonSchema, ids: string[], depth: number): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alts = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alts)) return fc.oneof(...alts.map((s: JsonSchema) => plainArb(s, ids, depth)));
  const type = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : ['string'];
  return fc.oneof(...type.map((ty: string) => typedArb(ty, schema, ids, depth)));
}

function typedArb(type: string, s: JsonSchema, ids: string[], depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: Math.min(s.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER) });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'array': {
      const items = s.items ? valueArb(s.items, ids, undefined, depth + 1) : fc.string();
      return fc.array(items, { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) });
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = valueArb(v, ids, k, depth + 1);
      return fc.record(model, { requiredKeys: (s.required ?? []).filter((k: string) => k in props) });
    }
    default:
      return stringArb(s, ids);
  }
}

function stringArb(s: JsonSchema, ids: string[]): fc.Arbitrary<string> {
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern));
  if (s.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  const min = s.minLength ?? 0;
  const max = Math.max(min, Math.min(s.maxLength ?? 40, 40));
  // Names of Object.prototype members find bugs in lookups keyed by client text.
  const text = fc.oneof(
    { weight: 9, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf').filter((v) => v.length >= min && v.length <= max),
    },
  );
  const real = ids.filter((id) => id.length >= min && id.length <= (s.maxLength ?? Infinity));
  return real.length > 0 ? fc.oneof(text, fc.constantFrom(...real)) : text;
}

/** A request that keeps to the operation's documented schemas; ids of the caller's own objects are mixed in. */
export function validRequestArb(op: Operation, ids: string[]): fc.Arbitrary<FuzzRequest> {
  const params = fc.record(
    Object.fromEntries(
      op.pathParams.map((p) => [
        p.name,
        fc.oneof(
          fc.constantFrom(...(ids.length ? ids : ['x'])),
          stringArb(p.schema, []).filter((v) => v.length > 0),
        ),
      ]),
    ),
  );
  const queryModel = Object.fromEntries(op.query.map((p) => [p.name, valueArb(p.schema, ids, p.name)]));
  const query = fc
    .record(queryModel, { requiredKeys: op.query.filter((p) => p.required).map((p) => p.name) })
    .map((q) => Object.entries(q).map(([k, v]) => [k, String(v)] as [string, string]));
  const body = op.body
    ? op.body.required
      ? valueArb(op.body.schema, ids)
      : fc.option(valueArb(op.body.schema, ids), { nil: undefined })
    : fc.constant(undefined);
  // Idempotent operations get keys from a small pool, so replays and reused keys happen too.
  const key = op.idempotent
    ? fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.oneof(fc.constantFrom('k1', 'k2', 'k3'), fc.uuid()) })
    : fc.constant(undefined);
  return fc.record({ params, query, body, key }).map(({ key: k, ...r }) => ({ ...r, ...(k ? { headers: { 'idempotency-key': k } } : {}) }));
}

export const MUTATIONS = [
  'missingRequired',
  'wrongType',
  'outOfRange',
  'extraProperty',
  'longString',
  'nulByte',
  'loneSurrogate',
  'deepNesting',
  'brokenJson',
  'notAnObject',
  'contentType',
  'queryBad',
  'pathBad',
  'idempotencyKeyBad',
  'invalidUtf8',
  'charset',
  'impossibleDate',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

export interface MutationChoice {
  kind: Mutation;
  pick: number;
  variant: number;
}

const BODY_MUTATIONS: Mutation[] = [
  'missingRequired',
  'wrongType',
  'outOfRange',
  'extraProperty',
  'longString',
  'nulByte',
  'loneSurrogate',
  'deepNesting',
  'brokenJson',
  'notAnObject',
  'contentType',
  'invalidUtf8',
  'charset',
  'impossibleDate',
];

/** The mutations that apply to this operation: body ones only where there is a body, and so on. */
export function mutationArbFor(op: Operation): fc.Arbitrary<MutationChoice> {
  const kinds: Mutation[] = ['queryBad'];
  if (op.body) kinds.push(...BODY_MUTATIONS);
  if (op.pathParams.length > 0) kinds.push('pathBad', 'longString', 'nulByte', 'loneSurrogate');
  if (op.idempotent) kinds.push('idempotencyKeyBad');
  return fc.record({ kind: fc.constantFrom(...kinds), pick: fc.nat(), variant: fc.nat() });
}

type Path = Array<string | number>;

/** Every position in a JSON value, with the value there (the root included). */
function positions(value: unknown, path: Path = []): Array<{ path: Path; value: unknown }> {
  const out = [{ path, value }];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...positions(v, [...path, i])));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...positions(v, [...path, k]));
  return out;
}

function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  const [head, ...rest] = path as [string | number, ...Path];
  copy[head] = setAt(copy[head], rest, value);
  return copy;
}

function deleteAt(root: unknown, path: Path): unknown {
  if (path.length === 1) {
    const copy: any = { ...(root as object) };
    delete copy[path[0] as string];
    return copy;
  }
  const [head, ...rest] = path as [string | number, ...Path];
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  copy[head] = deleteAt(copy[head], rest);
  return copy;
}

const nth = <T>(xs: T[], i: number): T | undefined => (xs.length === 0 ? undefined : xs[i % xs.length]);

const LONG = 'x'.repeat(10 * 1024);
const WRONG_TYPES: unknown[] = [1, 'text', true, null, [], {}, 1.5, '10'];
const BAD_NUMBERS = [-1, 0, 1e308, -1e308, 2 ** 53 + 2, 0.5, 536_870_913, 1e21];
const BAD_QUERY = ['0', '26', '-1', 'abc', '1.5', '1e3', '', ' 1', '99999999999999999999', '0x10', LONG, '\u0000', '[]', '1e1', '+5', '-0', ' 5 ', '5.0'];
// Byte sequences that are not UTF-8: a lone continuation byte, truncated, overlong, a surrogate, past U+10FFFF.
const NOT_UTF8 = [[0xff], [0x80], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]];
const IMPOSSIBLE_DATES = ['2026-02-30T00:00:00Z', '2025-02-29T10:00:00Z', '2026-04-31T09:00:00Z', '2026-03-01T24:00:00Z', '2026-03-01T10:00:00+25:00'];
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T/;
const BAD_PATH = [LONG.slice(0, 300), '%00', '%ED%A0%80', '%zz', '%', 'a%2Fb', '..%2F..%2Fetc', '%F0%9F%92%A9', '%C0%AF', '%00' + 'a'.repeat(10)];
const BAD_KEYS = ['k'.repeat(256), 'caf\u00e9', 'tab\there', '', ' '.repeat(300)];

/**
 * Applies one mutation to a valid request. A mutation that finds nothing to change in this
 * request (no string to lengthen, no path parameter) falls back to breaking the JSON.
 */
export function mutate(op: Operation, req: FuzzRequest, m: MutationChoice): { req: FuzzRequest; label: string } {
  const body = req.body === undefined ? {} : req.body;
  const all = positions(body);
  const broken = () => ({
    req: { ...req, raw: ['{', '{"a":', '[1,2', '{"x":1}}', 'nul', '\u0000', '{"a":"\\ud800"', '{"__proto__":{"x":1}}'][m.variant % 8], invalid: true },
    label: 'brokenJson',
  });
  switch (m.kind) {
    case 'missingRequired': {
      const objs = all.filter((p) => p.value !== null && typeof p.value === 'object' && !Array.isArray(p.value) && Object.keys(p.value).length > 0);
      const target = nth(objs, m.pick);
      if (!target) return broken();
      const key = nth(Object.keys(target.value as object), m.variant)!;
      return { req: { ...req, body: deleteAt(body, [...target.path, key]) }, label: 'missingRequired' };
    }
    case 'wrongType': {
      const target = nth(all, m.pick)!;
      return { req: { ...req, body: setAt(body, target.path, WRONG_TYPES[m.variant % WRONG_TYPES.length]) }, label: 'wrongType' };
    }
    case 'outOfRange': {
      const nums = all.filter((p) => typeof p.value === 'number');
      const target = nth(nums, m.pick) ?? nth(all, m.pick)!;
      return { req: { ...req, body: setAt(body, target.path, BAD_NUMBERS[m.variant % BAD_NUMBERS.length]) }, label: 'outOfRange' };
    }
    case 'extraProperty': {
      const objs = all.filter((p) => p.value !== null && typeof p.value === 'object' && !Array.isArray(p.value));
      const target = nth(objs, m.pick) ?? { path: [], value: body };
      const name = ['id', 'workspaceId', '__extra', 'constructor', '$injected'][m.variant % 5]!;
      return { req: { ...req, body: setAt(body, [...target.path, name], 'injected') }, label: 'extraProperty' };
    }
    case 'longString':
    case 'nulByte':
    case 'loneSurrogate': {
      const strs = op.body ? all.filter((p) => typeof p.value === 'string') : [];
      const target = nth(strs, m.pick);
      const change = (s: string) => (m.kind === 'longString' ? LONG : m.kind === 'nulByte' ? `${s}\u0000x` : `${s}\ud800`);
      if (target) return { req: { ...req, body: setAt(body, target.path, change(target.value as string)) }, label: m.kind };
      const param = nth(op.pathParams, m.pick);
      if (param) return { req: { ...req, params: { ...req.params, [param.name]: change(req.params[param.name] ?? 'x') } }, label: `${m.kind}:path` };
      return broken();
    }
    case 'deepNesting': {
      // Sent as text: a value thousands of levels deep would overflow fast-check's own printing.
      const target = nth(all, m.pick)!;
      const depth = [64, 1000, 5000][m.variant % 3]!;
      const [open, close] = m.pick % 2 === 0 ? ['[', ']'] : ['{"a":', '}'];
      const raw = JSON.stringify(setAt(body, target.path, '__DEEP__')).replace('"__DEEP__"', `${open.repeat(depth)}1${close.repeat(depth)}`);
      return { req: { ...req, raw, invalid: true }, label: 'deepNesting' };
    }
    case 'brokenJson':
      return broken();
    case 'invalidUtf8': {
      // Bytes that are not UTF-8 inside a string of the body (or the body alone).
      const marker = '__NOT_UTF8__';
      const strs = all.filter((p) => typeof p.value === 'string');
      const target = nth(strs, m.pick);
      const text = target ? JSON.stringify(setAt(body, target.path, marker)) : `"${marker}"`;
      const [before = '', after = ''] = text.split(marker);
      const raw = Buffer.concat([Buffer.from(before), Buffer.from(NOT_UTF8[m.variant % NOT_UTF8.length]!), Buffer.from(after)]);
      return { req: { ...req, raw, invalid: true }, label: 'invalidUtf8' };
    }
    case 'charset': {
      const ct = [
        'application/json; charset=iso-8859-1',
        'application/json; charset="latin1"',
        'application/json;charset=utf-16le',
        'application/json; charset=windows-1252',
      ][m.variant % 4]!;
      return { req: { ...req, raw: JSON.stringify(body), contentType: ct, invalid: true }, label: 'charset' };
    }
    case 'impossibleDate': {
      const dates = all.filter((p) => typeof p.value === 'string' && DATE_TIME.test(p.value));
      const target = nth(dates, m.pick);
      if (!target) return broken();
      return { req: { ...req, body: setAt(body, target.path, IMPOSSIBLE_DATES[m.variant % IMPOSSIBLE_DATES.length]), invalid: true }, label: 'impossibleDate' };
    }
    case 'notAnObject':
      return { req: { ...req, body: [[], 1, 'text', true, [body]][m.variant % 5] }, label: 'notAnObject' };
    case 'contentType': {
      const ct = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', null][m.variant % 5]!;
      const raw = JSON.stringify(body);
      return { req: { ...req, raw, contentType: ct, invalid: true }, label: 'contentType' };
    }
    case 'queryBad': {
      if (op.query.length === 0) return { req: { ...req, query: [...req.query, ['unknown', 'x']] }, label: 'query:unknown' };
      const p = nth(op.query, m.pick)!;
      const v = m.variant % (BAD_QUERY.length + 2);
      if (v === BAD_QUERY.length) return { req: { ...req, query: [...req.query, ['zz_unknown', '1']] }, label: 'query:unknown' };
      if (v === BAD_QUERY.length + 1)
        return { req: { ...req, query: [...req.query.filter(([k]) => k !== p.name), [p.name, '1'], [p.name, '2']] }, label: 'query:repeated' };
      return { req: { ...req, query: [...req.query.filter(([k]) => k !== p.name), [p.name, BAD_QUERY[v]!]] }, label: 'query:value' };
    }
    case 'pathBad': {
      const p = nth(op.pathParams, m.pick);
      if (!p) return broken();
      const v = BAD_PATH[m.variant % BAD_PATH.length]!;
      const rawPath = op.path.replace(/\{(\w+)\}/g, (_x, n: string) => (n === p.name ? v : encodeURIComponent(req.params[n] ?? 'x')));
      return { req: { ...req, rawPath }, label: 'pathBad' };
    }
    case 'idempotencyKeyBad': {
      if (!op.idempotent) return broken();
      return { req: { ...req, headers: { 'idempotency-key': BAD_KEYS[m.variant % BAD_KEYS.length]! }, invalid: true }, label: 'idempotencyKeyBad' };
    }
  }
}
