// Request validation. Bodies are strict JSON: no coercion, no defaults invented, no unknown
// properties. Query strings and path parameters are text by nature, so they are coerced to the
// declared type first and then range-checked. Errors become the service's codes with a `param`.
import { createRequire } from 'node:module';
import type AjvModule from 'ajv';
import type { ErrorObject } from 'ajv';
import type addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler, FastifySchemaValidationError, FastifyServerOptions } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { findString, hasNul } from '../lib/unstorable.ts';
import type { LazySchemas } from './lazy-schemas.ts';

// ajv and ajv-formats are CommonJS with a default export; under Node's ESM loader it is nested.
function cjsDefault<T>(module: unknown): T {
  return ((module as { default?: T }).default ?? module) as T;
}
const require = createRequire(import.meta.url);

/**
 * A new Ajv with the formats. Ajv is loaded by the first schema compiled rather than at start,
 * synchronously, since a compile is: a process that has served no route holds none of it
 * (docs/performance.md §Loading only what is configured).
 */
function makeAjv(coerce: boolean) {
  const Ajv = cjsDefault<typeof AjvModule.default>(require('ajv'));
  const addFormats = cjsDefault<typeof addFormatsModule.default>(require('ajv-formats'));
  // `verbose` gives a failed union (anyOf) its forms' schemas, which its message lists (`describe`).
  const ajv = new Ajv({ coerceTypes: coerce, useDefaults: coerce, removeAdditional: false, allErrors: false, strict: false, verbose: true });
  addFormats(ajv);
  return ajv;
}

/** The param path of the first string (or key) holding a NUL character, or null. */
export function findNul(value: unknown, path = ''): string | null {
  return findString(value, hasNul, path);
}

/**
 * The first query or path parameter holding a NUL character in its name or any of its values,
 * named as sent: a repeated query key is still its key (`$name`), never `$name[1]`, which would
 * read as a filter operator (docs/filtering.md).
 */
export function findNulKey(parts: unknown): string | null {
  if (parts === null || typeof parts !== 'object') return null;
  for (const [k, v] of Object.entries(parts)) if (k.includes('\u0000') || findNul(v) !== null) return k;
  return null;
}

/** `s` decoded as a query string's part is (`+` is a space), or null when it is not percent-encoded UTF-8. */
function decodedPart(s: string): string | null {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/**
 * The first query parameter of `url` whose key or value is not percent-encoded UTF-8 (`%E9`, a
 * Latin-1 `é`; `%ED%A0%80`, half of a surrogate pair; `%zz`), named by its key as decoded, or as
 * sent when the key itself is the bad part; or null. The query parser keeps such a part as its raw
 * text, so a filter would look for `Caf%E9` and find nothing instead of refusing what the path
 * refuses (docs/errors.md §Query parameters).
 */
export function badlyEncodedKey(url: string): string | null {
  const q = url.indexOf('?');
  if (q < 0 || !url.includes('%', q)) return null;
  for (const part of url.slice(q + 1).split('&')) {
    if (!part.includes('%')) continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    const decoded = decodedPart(key);
    if (decoded === null) return key;
    if (eq >= 0 && decodedPart(part.slice(eq + 1)) === null) return decoded;
  }
  return null;
}

let strictAjv: ReturnType<typeof makeAjv> | undefined;

/**
 * A check of a JSON value against `schema` made as a request body's is (strict: nothing coerced,
 * no unknown property), whose failure is the error that a body's same failure answers.
 */
export function bodyCheck(schema: object): (value: unknown) => AppError | undefined {
  const validate = (strictAjv ??= makeAjv(false)).compile(schema);
  return (value) => (validate(value) ? undefined : validationError((validate.errors ?? []) as FastifySchemaValidationError[], 'body'));
}

// The query of an operation that defines no query parameter: every key is unknown.
const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false };

/**
 * The request validators' compiler (`schemaController.compilersFactory.buildValidator`): a body is
 * checked strictly, a query string or path parameters coerced. Each validator is compiled by the
 * first request it checks (src/http/lazy-schemas.ts), the two Ajv instances by the first compile.
 */
export function requestValidators(schemas: LazySchemas): FastifySchemaCompiler<unknown> {
  let strict: ReturnType<typeof makeAjv> | undefined;
  let coercing: ReturnType<typeof makeAjv> | undefined;
  return schemas.validators(({ schema, httpPart }) =>
    httpPart === 'body' ? (strict ??= makeAjv(false)).compile(schema as object) : (coercing ??= makeAjv(true)).compile(schema as object),
  );
}

type ValidatorFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;

/**
 * `requestValidators` as Fastify's `schemaController.compilersFactory.buildValidator`, so that
 * Fastify never loads its own compiler. Fastify's type names Ajv's compile as the compiler; it
 * calls it with a route's schema definition, as it calls one given to `setValidatorCompiler`.
 */
export function validatorFactory(schemas: LazySchemas): ValidatorFactory {
  const validators = requestValidators(schemas);
  return (() => validators) as unknown as ValidatorFactory;
}

export function installValidators(app: FastifyInstance): void {
  // Every operation refuses a query parameter it does not define, as its body refuses an unknown
  // property (docs/errors.md §Query parameters): a misspelt `limt` or a `sort` the API does not
  // have is answered, never silently ignored. Routes that are not operations (health, documents,
  // the byte endpoints) keep ignoring their query.
  app.addHook('onRoute', (route) => {
    if (!route.config?.operation || route.schema?.querystring) return;
    route.schema = { ...route.schema, querystring: NO_QUERY };
  });
  // No id or parameter holds a NUL character, and PostgreSQL cannot even compare text with one
  // (it fails the query): refused as input, the same on both databases.
  app.addHook('preValidation', async (request) => {
    if (!request.routeOptions.config.operation) return;
    // Fastify validates an absent body as `null`, so a schema cannot tell the two apart: a route
    // whose body is optional reads an absent one as `{}`, and a `null` sent is refused by the
    // schema like any other value that is not an object (docs/errors.md §Request bodies).
    if (request.routeOptions.config.optionalBody && request.body === undefined) request.body = {};
    const badly = badlyEncodedKey(request.url);
    if (badly !== null) throw new AppError('invalid_parameter', `Parameter "${badly}" is not valid percent-encoded UTF-8.`, { param: badly });
    const param = findNulKey(request.params) ?? findNulKey(request.query);
    if (param !== null) throw new AppError('invalid_parameter', `Parameter "${param}" contains a NUL character.`, { param });
    const loose = looseInteger(request.routeOptions.schema?.querystring, request.query);
    if (loose !== null) throw new AppError('invalid_parameter', `Parameter "${loose}" must be a whole number written in decimal digits.`, { param: loose });
  });
}

// An integer in a query string is plain decimal digits, a minus sign before a negative one
// (docs/errors.md §Numbers in query strings). The coercion would read `1e1`, `0x10`, ` 5 `, `+5`
// and `-0` as numbers too: refused rather than reshaped.
const PLAIN_INTEGER = /^(?:\d+|-[1-9]\d*)$/;

/** The first query parameter declared an integer whose value is not written as one, or null. */
function looseInteger(schema: unknown, query: unknown): string | null {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties;
  if (!properties || query === null || typeof query !== 'object') return null;
  for (const [name, prop] of Object.entries(properties)) {
    if (prop.type !== 'integer') continue;
    const raw = (query as Record<string, unknown>)[name];
    const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
    if (values.some((v) => typeof v !== 'string' || !PLAIN_INTEGER.test(v))) return name;
  }
  return null;
}

/** `/fields/$name` + `/relationships/$contacts/add/2` → `fields.$name`, `relationships.$contacts.add[2]`. */
export function pointerToParam(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

function join(base: string, child: string): string {
  return base === '' ? child : `${base}.${child}`;
}

// A form of a union that the value does not have: its first error is about the union's own value,
// and about its JSON type or its literal value. Any other first error (a member missing or unknown,
// a string too long, an error deeper inside) means the value has that form.
const OTHER_FORM = new Set(['type', 'const', 'enum']);

/** Why the value failed: a single error, or a union none of whose forms the value has. */
type Cause = { error: ErrorObject; union?: 'type' | 'value' };

/**
 * The error that explains a failed validation (docs/errors.md §Values of several forms). Without
 * `allErrors`, validation stops at the first failing keyword, so a failed union is the last error,
 * after its forms' errors. A value that has some of the union's forms is judged by the one it gets
 * deepest into; one that has none is the union's own failure: `value` when it has a form's type
 * but not its literal value, else `type`.
 */
function cause(errors: readonly ErrorObject[]): Cause | undefined {
  const last = errors.at(-1);
  if (!last || last.keyword !== 'anyOf') return errors[0] && { error: errors[0] };
  const forms = new Map<string, ErrorObject[]>();
  for (const e of errors.slice(0, -1)) {
    const form = e.schemaPath.startsWith(`${last.schemaPath}/`) ? e.schemaPath.slice(last.schemaPath.length + 1).split('/')[0] : undefined;
    if (form !== undefined) forms.set(form, [...(forms.get(form) ?? []), e]);
  }
  const firsts = [...forms.values()].map((f) => f[0]).filter((e) => e !== undefined);
  const had = [...forms.values()].filter((f) => f[0] && !(f[0].instancePath === last.instancePath && OTHER_FORM.has(f[0].keyword)));
  if (had.length === 0) return { error: last, union: firsts.some((e) => e.keyword !== 'type') ? 'value' : 'type' };
  const causes = had.map(cause).filter((c) => c !== undefined);
  return causes.reduce((best, c) => (c.error.instancePath.length > best.error.instancePath.length ? c : best));
}

/** A union's forms as a person reads them: `"primary", "duplicate" or {"value": ...}`. */
function describe(schemas: unknown): string {
  const forms = [...new Set(flatForms(schemas))];
  return forms.length < 2 ? (forms[0] ?? 'valid') : `${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}`;
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  null: 'null',
};

function flatForms(schemas: unknown): string[] {
  if (!Array.isArray(schemas)) return [];
  return schemas.flatMap((s: { const?: unknown; enum?: unknown[]; anyOf?: unknown; type?: string; required?: string[] }) => {
    if (s.const !== undefined) return [JSON.stringify(s.const)];
    if (s.enum) return s.enum.map((v) => JSON.stringify(v));
    if (s.anyOf) return flatForms(s.anyOf);
    if (s.type === 'object') return [s.required?.length ? `{${s.required.map((k) => `${JSON.stringify(k)}: ...`).join(', ')}}` : 'an object'];
    return [ARTICLE[s.type ?? ''] ?? 'another value'];
  });
}

/**
 * What a length or count limit of a schema requires, in the words of docs/errors.md §Lengths
 * (`must be 1 to 255 characters`), for Ajv's `must NOT have fewer than 1 characters`; null for any
 * other failure. The schema's `minLength` and `maxLength` count code points, as the message says.
 */
function lengthRule(e: ErrorObject): string | null {
  const unit = e.keyword === 'minLength' || e.keyword === 'maxLength' ? 'characters' : e.keyword === 'minItems' || e.keyword === 'maxItems' ? 'values' : null;
  if (unit === null) return null;
  const s = (e.parentSchema ?? {}) as { minLength?: number; maxLength?: number; minItems?: number; maxItems?: number };
  const [min, max] = unit === 'characters' ? [s.minLength, s.maxLength] : [s.minItems, s.maxItems];
  const verb = unit === 'characters' ? 'be' : 'have';
  if (min !== undefined && min === max) return `must ${verb} exactly ${min} ${min === 1 ? unit.slice(0, -1) : unit}`;
  if (min !== undefined && max !== undefined) return `must ${verb} ${min} to ${max} ${unit}`;
  return max !== undefined ? `must ${verb} at most ${max} ${unit}` : `must ${verb} at least ${min ?? 0} ${unit}`;
}

export function validationError(errors: FastifySchemaValidationError[], context: string): AppError {
  const found = cause(errors as ErrorObject[]);
  const e = found?.error;
  const base = e ? pointerToParam(e.instancePath) : '';
  if (context !== 'body') {
    const p = e?.params as { missingProperty?: string; additionalProperty?: string } | undefined;
    // A parameter with an empty name (`?=1`) is still a parameter, named as sent: "" is its name.
    const unknown = p?.additionalProperty;
    const name = base || (unknown ?? (p?.missingProperty || context));
    const must = found?.union ? `must be ${describe(e?.schema)}` : ((e && lengthRule(e)) ?? e?.message ?? 'is invalid');
    // A key sent twice arrives as an array (docs/errors.md §Query parameters): "must be integer"
    // would not tell the caller what is wrong with `limit=1&limit=2`.
    const repeated = e?.keyword === 'type' && Array.isArray(e.data);
    const why = unknown !== undefined ? 'it is not a known parameter' : repeated ? 'it is given more than once' : `it ${must}`;
    return new AppError('invalid_parameter', `Invalid ${context === 'params' ? 'path' : 'query'} parameter "${name}": ${why}.`, { param: name });
  }
  if (!found || !e) return new AppError('invalid_value', 'The request body is invalid.');
  const where = base === '' ? 'The request body' : `"${base}"`;
  if (found.union) {
    const code = found.union === 'type' ? 'invalid_type' : 'invalid_value';
    return new AppError(code, `${where} must be ${describe(e.schema)}.`, base === '' ? {} : { param: base });
  }
  switch (e.keyword) {
    case 'additionalProperties': {
      const param = join(base, String((e.params as { additionalProperty: string }).additionalProperty));
      return new AppError('unknown_field', `Unknown field "${param}".`, { param });
    }
    case 'required': {
      const param = join(base, String((e.params as { missingProperty: string }).missingProperty));
      return new AppError('parameter_missing', `Missing required field "${param}".`, { param });
    }
    case 'type': {
      const expected = String((e.params as { type: string }).type).replace(',', ' or ');
      return new AppError('invalid_type', `${where} must be of type ${expected}.`, base === '' ? {} : { param: base });
    }
    default: {
      // Addresses of meetings, e-mails and mailboxes are ASCII (docs/records.md §E-mail addresses):
      // "must match format email" would not say why `ann@straße.example` is refused.
      // Nor would "must match format uri" say what a meeting's $meetingUrl takes (docs/meetings.md §Writes).
      const format = e.keyword === 'format' ? (e.params as { format: string }).format : null;
      const must =
        format === 'email'
          ? 'must be a bare e-mail address in ASCII (a domain of other characters in its xn-- form)'
          : format === 'uri'
            ? 'must be an absolute http or https URL in ASCII, without white space, such as https://meet.example/abc'
            : (lengthRule(e) ?? e.message ?? 'is invalid');
      return new AppError('invalid_value', `${where} ${must}.`, base === '' ? {} : { param: base });
    }
  }
}
