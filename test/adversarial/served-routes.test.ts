// The adversarial tables cover what the app really serves: every /v1 route registered in Fastify
// (read from its route tree, not from the OpenAPI document) is a documented operation, and every
// documented operation has its row in the scope table, an id kind for each path parameter (tenant
// matrix) and, when it takes a body, a body in the mass-assignment table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { loadDocument, operationsOf } from '../helpers/openapi-ops.ts';
import { BODIES, idKinds, SCOPE_TABLE } from './operations.ts';

/** `METHOD /path` of every route in Fastify's printed route tree (parameters written `{}`). */
function servedRoutes(tree: string): Set<string> {
  const out = new Set<string>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = [...(m[1] as string)].length / 4;
    stack.length = depth;
    stack.push(m[2] as string);
    const path = stack.join('').replace(/:[\w|:]+/g, '{}');
    for (const method of (m[3] ?? '').split(', ')) if (method && method !== 'HEAD' && path.startsWith('/v1/')) out.add(`${method} ${path}`);
  }
  return out;
}

test('every served /v1 route is a documented operation with a row in each adversarial table', async () => {
  const t = await buildTestApp('sqlite');
  try {
    const served = servedRoutes(t.app.printRoutes({ commonPrefix: false }));
    const ops = operationsOf(await loadDocument(t));
    const documented = new Set(ops.map((o) => `${o.method} ${o.path.replace(/\{\w+\}/g, '{}')}`));
    assert.ok(served.size >= 50, `${served.size} routes read from the tree`);
    assert.deepEqual([...served].filter((r) => !documented.has(r)).sort(), [], 'served but not documented');
    assert.deepEqual([...documented].filter((r) => !served.has(r)).sort(), [], 'documented but not served');
    for (const op of ops) {
      assert.ok(op.operationId in SCOPE_TABLE, `${op.operationId}: no row in SCOPE_TABLE`);
      assert.deepEqual(Object.keys(idKinds(op)).sort(), op.pathParams.map((p) => p.name).sort(), `${op.operationId}: a path parameter without an id kind`);
      if (op.body) assert.ok(op.operationId in BODIES, `${op.operationId}: no body in BODIES (mass assignment)`);
    }
  } finally {
    await t.close();
  }
});
