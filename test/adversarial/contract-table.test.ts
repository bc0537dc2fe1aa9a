// The rate category and the Idempotency-Key support of every served operation, as the contract's
// tables and rules give them (docs/design.md §Rate limits, §Idempotency), written out here
// independently of the routes: every paginated listing is Search, every other GET is Read; every
// POST and DELETE changes state, so it is Write and honours Idempotency-Key; no GET honours it.
// The scope of each operation is pinned by the scope matrix (test/adversarial/scope.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { loadDocument } from '../helpers/openapi-ops.ts';

/** The paginated listings (`{object: "list", data, totalCount}`): the contract's Search rows. */
const SEARCH = new Set([
  '/v1/lists',
  '/v1/lists/{}/accounts',
  '/v1/lists/{}/contacts',
  '/v1/lists/{}/opportunities',
  '/v1/messages',
  '/v1/files',
  '/v1/members',
  '/v1/accounts',
  '/v1/contacts',
  '/v1/opportunities',
  '/v1/tasks',
  '/v1/notes',
  '/v1/objects/{}',
  '/v1/meetings',
  '/v1/emails',
  '/v1/channels',
]);

test('every operation has the rate category of the contract, and honours Idempotency-Key exactly when it writes', async () => {
  const t = await buildTestApp('sqlite');
  try {
    const doc = await loadDocument(t);
    const wrong: string[] = [];
    const searches = new Set<string>();
    let count = 0;
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      const template = path.replace(/\{\w+\}/g, '{}');
      for (const [method, op] of Object.entries<any>(item)) {
        count++;
        const writes = method === 'post' || method === 'delete';
        const category = writes ? 'Write' : SEARCH.has(template) ? 'Search' : 'Read';
        if (category === 'Search') searches.add(template);
        const at = `${method.toUpperCase()} ${path}`;
        if (op['x-rate-category'] !== category) wrong.push(`${at}: category ${op['x-rate-category']}, the contract's ${category}`);
        if ((op['x-idempotent'] === true) !== writes) wrong.push(`${at}: x-idempotent ${op['x-idempotent'] === true}, the contract's ${writes}`);
      }
    }
    assert.ok(count >= 80, `${count} operations`);
    assert.deepEqual(wrong, []);
    assert.deepEqual(
      [...SEARCH].filter((p) => !searches.has(p)),
      [],
      'every listing of the contract is served',
    );
  } finally {
    await t.close();
  }
});
