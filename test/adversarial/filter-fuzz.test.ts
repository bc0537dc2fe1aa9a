// Filter fuzzing (issue 13, item 6): every listing the OpenAPI document marks `x-filters` gets
// generated filter query strings (docs/filtering.md): `<key>[<op>]=<value>`, negated operators,
// real keys of the type and hostile ones (`__proto__[equal]`, quotes, `%`, `_`, brackets, very
// long keys and values, NUL). Pass: 200, or 400 `invalid_parameter` in the documented error shape
// naming a query key that was sent; never a 5xx; every response as the document promises. Seeds
// and runs as for the schema fuzz (FUZZ_SEED, FUZZ_RUNS).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField, addOption, addRelationship } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, headers, seedWorkspace } from '../helpers/app.ts';
import { loadDocument, type Operation, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 20260301);
const SLUG = 'gadget';

const OPERATORS = ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual', 'startsWith', 'contains'];
// Relationship slugs `$<type>-<type>` (either order; a custom one `$<objectType>-<key>`), added to
// every listing's keys: each names a relationship on some listings and nothing on the others.
const SLUG_KEYS = ['$account-contact', '$contact-account', '$task-account', '$account-note', '$opportunity-account', `$${SLUG}-owner_account`, '$a-b-c', '$-'];
const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  "$name'",
  'a"b',
  '%',
  '_',
  '%25',
  'x'.repeat(250),
  '$name[',
  '$name]',
  '[equal]',
  '$name[equal][x]',
  '',
];
const HOSTILE_VALUES = [
  "'",
  "' OR '1'='1",
  '"; drop table records; --',
  '%',
  '_',
  '%_%',
  '\\',
  '\\%',
  'x'.repeat(1000),
  'x'.repeat(1001),
  'é'.repeat(600),
  '\u0000',
  'a\u0000b',
  '',
  ' ',
  '1e9',
  '-0.5',
  '12',
  'NaN',
  'true',
  '2026-03-01T10:00:00+01:00',
  '2026-03-01T10:00:00 01:00',
  'null',
  '[]',
  '{}',
];

// One checker for both dialects: both apps serve the same document, so each response schema is
// compiled once for the file.
const checker = responseChecker();

eachDialect('filter fuzz', (ctx) => {
  let ops: Operation[] = [];
  let secret = '';
  const keys = new Map<string, string[]>();
  const ids: string[] = [];

  before(async () => {
    const t = ctx();
    const doc = await loadDocument(t);
    const filtered = new Set<string>();
    for (const item of Object.values<any>(doc.paths)) for (const op of Object.values<any>(item)) if (op['x-filters']) filtered.add(op.operationId);
    ops = operationsOf(doc).filter((o) => filtered.has(o.operationId));
    const seeded = await seedWorkspace(t);
    secret = seeded.secret;
    const c = operatorCtx(t.deps.db.kysely, seeded.workspaceId);
    await defineObjectType(c, { slug: SLUG, label: 'Gadgets' });
    for (const type of ['account', SLUG]) {
      await addField(c, { objectType: type, key: 'seats', label: 'Seats', valueType: 'NUMBER' });
      await addField(c, { objectType: type, key: 'renews', label: 'Renews', valueType: 'DATETIME' });
      await addField(c, { objectType: type, key: 'vip', label: 'VIP', valueType: 'CHECKBOX' });
      await addField(c, { objectType: type, key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
      await addOption(c, { objectType: type, fieldKey: 'tier', label: 'Gold' });
      await addField(c, { objectType: type, key: 'tags', label: 'Tags', valueType: 'MULTI_SELECT' });
      await addField(c, { objectType: type, key: 'site', label: 'Site', valueType: 'URL' });
      // Filter values read into the stored forms first (E.164, profile URLs): fuzzed as well.
      await addField(c, { objectType: type, key: 'phone', label: 'Phone', valueType: 'TELEPHONE', defaultCountry: 'DE' });
      await addField(c, { objectType: type, key: 'handle', label: 'Handle', valueType: 'SOCIAL_HANDLE', handleService: 'TWITTER' });
    }
    await addField(c, { objectType: SLUG, key: 'name', label: 'Name', valueType: 'TEXT' });
    await addRelationship(c, { objectType: SLUG, key: 'owner_account', label: 'Account', cardinality: 'has_one', targetType: 'account' });
    const acc = await call(t, secret, 'POST', '/v1/accounts', {
      fields: { $name: "O'Hare % _ Inc", seats: 12, vip: true, tier: 'Gold', site: 'https://ohare.example', phone: '030 1234567', handle: '@ohare' },
    });
    assert.equal(acc.statusCode, 200, acc.body);
    ids.push(acc.json().id);
    const gadget = await call(t, secret, 'POST', `/v1/objects/${SLUG}/values`, {
      fields: { name: 'Widget_1%', seats: 3 },
      relationships: { owner_account: acc.json().id },
    });
    assert.equal(gadget.statusCode, 200, gadget.body);
    ids.push(gadget.json().id);
    // The keys a listing knows: its definitions where it has them, else what its records show.
    for (const op of ops) {
      const path = op.path.replace('{entitySlug}', SLUG);
      const defs = await call(t, secret, 'GET', `${path}/definitions`);
      const known =
        defs.statusCode === 200
          ? [...Object.keys(defs.json().fieldDefinitions), ...Object.keys(defs.json().relationshipDefinitions)]
          : Object.keys({ ...(await call(t, secret, 'GET', path)).json().data?.[0]?.fields });
      keys.set(op.operationId, [...(known.length > 0 ? known : ['$title']), ...SLUG_KEYS]);
    }
  });

  test('the document marks the record and custom-object listings as filterable', () => {
    assert.deepEqual(ops.map((o) => o.operationId).sort(), [
      'listAccounts',
      'listContacts',
      'listNotes',
      'listObjectRecords',
      'listOpportunities',
      'listTasks',
    ]);
  });

  test('generated filters on every filterable listing: 200 or a 400 naming a sent key, never a 5xx', async (tc) => {
    const t = ctx();
    for (const op of ops) {
      await tc.test(op.operationId, async () => {
        const statuses: Record<number, number> = {};
        const known = keys.get(op.operationId) as string[];
        const key = fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...known) },
          { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_KEYS) },
          { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
        );
        const operator = fc.oneof(
          fc.constant(''),
          fc.constantFrom(...OPERATORS).map((o) => `[${o}]`),
          fc.constantFrom(...OPERATORS).map((o) => `[-${o}]`),
          fc.constantFrom('[]', '[-]', '[bogus]', '[EQUAL]', '[__proto__]', '[equal', '[[equal]]'),
        );
        const value = fc.oneof(
          { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_VALUES, ...ids) },
          { weight: 1, arbitrary: fc.string({ maxLength: 40, unit: 'binary' }) },
        );
        const anything = fc.array(fc.tuple(key, operator, value), { minLength: 1, maxLength: 4 });
        // Mostly well-formed: a real key, a plain or likely operator, a plausible (or hostile) value.
        const plausible = fc.array(
          fc.tuple(
            fc.constantFrom(...known),
            fc.constantFrom(
              '',
              '[equal]',
              '[-equal]',
              '[startsWith]',
              '[-startsWith]',
              '[-contains]',
              '[contains]',
              '[greaterThan]',
              '[-lessThan]',
              '[greaterThanOrEqual]',
              '[-lessThanOrEqual]',
            ),
            fc.constantFrom(
              '',
              '12',
              'Gold',
              ' gOLD ',
              'true',
              'a',
              "O'Hare",
              '%',
              '_',
              '\\',
              '2026-03-01T10:00:00Z',
              '2026-03-01t10:00:00z',
              '2026-03-01T15:30:00.0009+05:30',
              '2026-02-29T10:00:00Z',
              '030 123',
              '+49 (30) 1234567 x9',
              '@ohare',
              'https://x.com/',
              ...ids,
            ),
          ),
          { minLength: 1, maxLength: 2 },
        );
        const filters = fc.oneof(anything, plausible);
        await fc.assert(
          fc.asyncProperty(filters, fc.boolean(), async (list, paged) => {
            const sent = list.map(([k, o, v]) => [`${k}${o}`, v] as const);
            const qs = [...sent, ...(paged ? [['limit', '2'] as const] : [])].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
            const url = `${op.path.replace('{entitySlug}', SLUG)}?${qs}`;
            const res = await t.app.inject({ method: 'GET', url, headers: headers(secret) });
            statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
            const where = `${op.operationId} GET ${url.slice(0, 300)}`;
            assert.ok(res.statusCode === 200 || res.statusCode === 400, `${where}: ${res.statusCode} ${res.body.slice(0, 300)}`);
            const problem = checker.check(op, { statusCode: res.statusCode, headers: res.headers, body: res.body });
            assert.equal(problem, null, `${where}: ${problem}`);
            if (res.statusCode === 400) {
              const error = res.json().error;
              assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'requestId', 'type'], where);
              assert.equal(error.type, 'bad_request', where);
              assert.equal(error.code, 'invalid_parameter', `${where}: ${res.body}`);
              assert.ok(
                sent.some(([k]) => k === error.param) || error.param === 'limit',
                `${where}: param ${JSON.stringify(error.param)} names no key that was sent`,
              );
            }
          }),
          { numRuns: RUNS, seed: SEED, endOnFailure: true },
        );
        console.log(`# filter fuzz [${t.dialect}] ${op.operationId}: ${RUNS} cases; statuses ${JSON.stringify(statuses)}; seed ${SEED}`);
        assert.ok(statuses[200] && statuses[400], `${op.operationId}: both accepted and refused filters were generated`);
      });
    }
  });

  test('a NUL in the second value of a repeated key names the key as sent, not an index', async () => {
    const t = ctx();
    for (const path of ['/v1/accounts', `/v1/objects/${SLUG}`]) {
      const res = await call(t, secret, 'GET', `${path}?seats%5BgreaterThan%5D=1&seats%5BgreaterThan%5D=%00`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.param, 'seats[greaterThan]');
    }
  });

  test('the whole run logged no unhandled error', () => {
    assert.ok(!ctx().logs().includes('unhandled error'));
  });
});
