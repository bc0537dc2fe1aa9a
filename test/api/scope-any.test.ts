// The reads whose scope depends on what they read (docs/design.md §Requests, Order of checks):
// `GET /v1/enrichmentRun/{runId}` and `GET /v1/merges/{id}` declare the scopes one of which they
// need whatever they read, so a key holding none of them is refused at the scope step (403), before
// its id is validated (400), whatever the id; a key holding one gets to the validation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Scope } from '../../src/auth/scopes.ts';
import { call, eachDialect, keyFor, seedWorkspace } from '../helpers/app.ts';

const CASES: { path: string; holdsOne: Scope; holdsNone: Scope[] }[] = [
  { path: '/v1/enrichmentRun', holdsOne: 'contacts:read', holdsNone: ['accounts:update', 'contacts:update'] },
  { path: '/v1/merges', holdsOne: 'opportunities:read', holdsNone: ['accounts:update', 'accounts:delete'] },
];

eachDialect('scopes one of which a read needs', (ctx) => {
  test('a key holding none of them is refused before its id is validated; one holding one is validated', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const c of CASES) {
      const none = await keyFor(t, s.workspaceId, s.userId, c.holdsNone);
      const one = await keyFor(t, s.workspaceId, s.userId, [c.holdsOne]);
      const answers = [];
      for (const id of ['x'.repeat(256), `enr_${'0'.repeat(26)}`]) {
        const res = await call(t, none, 'GET', `${c.path}/${id}`);
        assert.equal(res.statusCode, 403, `${c.path}/${id.slice(0, 8)}…: ${res.body}`);
        assert.equal(res.json().error.code, 'insufficient_scope');
        assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope"/);
        answers.push(res.json().error.message);
      }
      assert.equal(answers[0], answers[1], `${c.path}: a malformed id is answered as a well-formed one`);
      const invalid = await call(t, one, 'GET', `${c.path}/${'x'.repeat(256)}`);
      assert.equal(invalid.statusCode, 400, `${c.path}: ${invalid.body}`);
      assert.equal(invalid.json().error.code, 'invalid_parameter');
    }
  });

  test('the OpenAPI document says which scopes one of which each needs', async () => {
    const doc = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.match(doc.paths['/v1/enrichmentRun/{runId}'].get.description, /Requires one of the scopes `accounts:read` or `contacts:read`\./);
    assert.match(doc.paths['/v1/merges/{id}'].get.description, /Requires one of the scopes `accounts:read` or /);
  });
});
