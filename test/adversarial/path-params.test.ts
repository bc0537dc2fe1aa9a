// Every path parameter of every documented operation is bounded (docs/errors.md §Lengths): an
// empty one or one over 255 characters is 400 invalid_parameter naming it, before any read, never
// a 404 for a thing with that id nor a request read as another route's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { loadDocument, operationsOf } from '../helpers/openapi-ops.ts';

test('every path parameter is bounded, and a value past its bound is invalid_parameter naming it', async () => {
  const t = await buildTestApp('sqlite');
  try {
    const s = await seedWorkspace(t);
    const ops = operationsOf(await loadDocument(t));
    const unbounded: string[] = [];
    const answers: string[] = [];
    for (const op of ops) {
      for (const p of op.pathParams) {
        const bounded = (p.schema.maxLength !== undefined && p.schema.maxLength <= 255) || p.schema.pattern !== undefined || p.schema.enum !== undefined;
        if (!bounded || !(p.schema.minLength >= 1 || p.schema.pattern !== undefined || p.schema.enum !== undefined))
          unbounded.push(`${op.operationId} ${p.name}`);
        if (p.schema.enum !== undefined) continue;
        const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === p.name ? 'x'.repeat(256) : 'x'));
        const res = await call(t, s.secret, op.method, url, op.body ? {} : undefined);
        const body = res.json().error ?? {};
        if (res.statusCode !== 400 || body.code !== 'invalid_parameter' || body.param !== p.name)
          answers.push(`${op.method} ${url.slice(0, 60)}… → ${res.statusCode} ${body.code} ${body.param}`);
      }
    }
    assert.deepEqual(unbounded, [], 'path parameters without bounds in the document');
    assert.deepEqual(answers, [], 'answers to a 256-character path parameter');
  } finally {
    await t.close();
  }
});
