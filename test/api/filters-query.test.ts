// How a listing's query string reaches the filters (docs/filtering.md): through Fastify's query
// parser and the validators of the service, with FilteredPageQuery as the route's schema. Keys
// keep their brackets, a repeated key is an array, limit and offset stay integers, and every
// key that is not a filter of the type, `__proto__[equal]` included, is refused naming it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import type { FieldDef, RelationshipDef, TypeDefinitions } from '../../src/definitions/service.ts';
import { FilteredPageQuery } from '../../src/records/schemas.ts';
import { parseFilters } from '../../src/records/filter/service.ts';
import { validationError, installValidators, requestValidators } from '../../src/http/validation.ts';
import { lazySchemas } from '../../src/http/lazy-schemas.ts';
import { AppError } from '../../src/lib/errors.ts';

const field = (key: string, valueType: string) => ({ key, valueType, multipleValues: false, options: null }) as unknown as FieldDef;
const defs: TypeDefinitions = {
  objectType: 'account',
  fields: new Map([
    ['$name', field('$name', 'TEXT')],
    ['seats', field('seats', 'NUMBER')],
    ['offset', field('offset', 'NUMBER')],
  ]),
  relationships: new Map<string, RelationshipDef>(),
  archived: new Map(),
};

async function app() {
  const a = Fastify();
  a.setValidatorCompiler(requestValidators(lazySchemas()));
  installValidators(a);
  a.setErrorHandler((err: Error & { validation?: never; validationContext?: string }, _req, reply) => {
    const e = err instanceof AppError ? err : err.validation ? validationError(err.validation, err.validationContext ?? 'body') : null;
    if (!e) throw err;
    return reply.code(e.status).send({ code: e.code, param: e.param });
  });
  a.get('/x', { schema: { querystring: FilteredPageQuery } }, async (req) => {
    const q = req.query as Record<string, unknown>;
    return {
      limit: q.limit,
      offset: q.offset,
      filters: parseFilters(q, defs).map((f) => ({ param: f.param, negate: f.negate, value: 'value' in f ? f.value : null })),
    };
  });
  return a;
}

test('filter keys arrive as written; repeated keys as arrays; limit and offset as integers', async () => {
  const a = await app();
  const r = await a.inject({ url: '/x?limit=5&%24name%5B-startsWith%5D=Ac&seats[greaterThan]=1&seats[greaterThan]=2&seats=3' });
  assert.equal(r.statusCode, 200, r.body);
  assert.deepEqual(r.json(), {
    limit: 5,
    offset: 0,
    filters: [
      { param: '$name[-startsWith]', negate: true, value: 'ac' },
      { param: 'seats[greaterThan]', negate: false, value: 1 },
      { param: 'seats[greaterThan]', negate: false, value: 2 },
      { param: 'seats', negate: false, value: 3 },
    ],
  });
});

test('unknown parameters and hostile keys are refused with invalid_parameter naming them', async () => {
  const a = await app();
  for (const [qs, param] of [
    ['sort=name', 'sort'],
    ['__proto__[equal]=x', '__proto__[equal]'],
    ['constructor=x', 'constructor'],
    ['$name[equal][x]=1', '$name[equal][x]'],
    ['seats[startsWith]=1', 'seats[startsWith]'],
    ['seats=abc', 'seats'],
    [`$name=${'a'.repeat(1001)}`, '$name'],
    ['limit=0', 'limit'],
  ] as const) {
    const r = await a.inject({ url: `/x?${qs}` });
    assert.equal(r.statusCode, 400, qs);
    assert.deepEqual(r.json(), { code: 'invalid_parameter', param }, qs);
  }
});

test('a custom field keyed offset is filtered with an operator; offset alone is the page', async () => {
  const a = await app();
  assert.deepEqual((await a.inject({ url: '/x?offset=7' })).json(), { limit: 25, offset: 7, filters: [] });
  assert.deepEqual((await a.inject({ url: '/x?offset[equal]=7' })).json(), {
    limit: 25,
    offset: 0,
    filters: [{ param: 'offset[equal]', negate: false, value: 7 }],
  });
});
