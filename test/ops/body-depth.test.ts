// A JSON body nested very deeply (docs/errors.md, `invalid_value`): refused with a 400 in the
// error shape before anything walks it, never a 500, a stack overflow or a crash; with an
// Idempotency-Key too, whose fingerprint walks the whole body.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../src/http/idempotency.ts';
import { MAX_BODY_DEPTH } from '../../src/http/body.ts';
import { AppError } from '../../src/lib/errors.ts';
import { call, eachDialect, headers, seedWorkspace } from '../helpers/app.ts';
import { pipelineRoutes } from '../helpers/pipeline-routes.ts';

const DEEP = 200_000;
const deepArrays = `{"email": "a@x.test", "deep": ${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`;
const deepObjects = `{"email": "a@x.test", "deep": ${'{"a":'.repeat(DEEP / 4)}1${'}'.repeat(DEEP / 4)}}`;

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

test('canonicalJson refuses a value nested deeper than the bound, without overflowing the stack', () => {
  assert.equal(canonicalJson(nested(MAX_BODY_DEPTH)).length > 0, true);
  for (const depth of [MAX_BODY_DEPTH + 1, DEEP])
    assert.throws(
      () => canonicalJson(nested(depth)),
      (err: unknown) => err instanceof AppError && err.status === 400 && err.code === 'invalid_value',
    );
});

eachDialect(
  'body depth',
  (ctx) => {
    for (const [label, body] of [
      ['arrays', deepArrays],
      ['objects', deepObjects],
    ] as const) {
      for (const [path, extra] of [
        ['/v1/test/users', { 'idempotency-key': `deep-${label}` }],
        ['/v1/lists', { 'idempotency-key': `deep-list-${label}` }],
        ['/v1/lists', {}],
      ] as const) {
        test(`${label} ${DEEP} levels deep to POST ${path}${'idempotency-key' in extra ? ' with Idempotency-Key' : ''} → 400 invalid_value`, async () => {
          const t = ctx();
          const s = await seedWorkspace(t);
          const res = await t.app.inject({
            method: 'POST',
            url: path,
            headers: headers(s.secret, { 'content-type': 'application/json', ...extra }),
            payload: body,
          });
          assert.equal(res.statusCode, 400, res.body.slice(0, 300));
          const err = res.json().error;
          assert.equal(err.code, 'invalid_value');
          assert.equal(err.type, 'bad_request');
          assert.match(err.message, new RegExp(`${MAX_BODY_DEPTH} levels`));
          assert.equal(err.requestId, res.headers['x-request-id']);
          // The server still answers.
          assert.equal((await call(t, s.secret, 'POST', '/v1/test/users', { email: `after-${label}@x.test` })).statusCode, 200);
        });
      }
    }
  },
  { routes: pipelineRoutes },
);
