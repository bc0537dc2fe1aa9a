// A page of a list's members read while the list is moved to the trash (docs/pages.md §Round trips
// of a page): the list and its page are read side by side, each in its own snapshot on
// PostgreSQL, so the list may be read live and its page after the delete committed, when it has
// no members left. The page is then never answered as an empty list: the list is read again, found
// gone, and the answer is 404, as it is for a page asked after the delete.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { trashList } from '../../src/trash/service.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

eachDialect('a member page beside a delete of its list', (ctx) => {
  test('a list with members is never answered as empty: 404 once the delete committed', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids: string[] = [];
    for (const n of ['Ann', 'Bob']) ids.push((await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })).json().id);
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: ids } })).json();
    const empty = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'E', $objectType: 'contact' } })).json();
    // An empty list is answered as one, and a deleted one is 404, whatever the order of the reads.
    assert.deepEqual((await call(t, s.secret, 'GET', `/v1/lists/${empty.id}/contacts`)).json(), { data: [], object: 'list', totalCount: 0 });
    if (t.deps.db.dialect === 'postgres') {
      let page!: ReturnType<typeof call>;
      await write(t.deps.db.kysely, async (tx) => {
        await trashList(operatorCtx(tx, s.workspaceId), { id: list.id });
        // The page's ranked ids are read after the list: the list is read live, its ids wait here
        // until the delete commits, and are then read from the list's ranked set as it left it.
        await sql`lock table rank_buckets in access exclusive mode`.execute(tx);
        page = call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`);
        assert.ok(await someoneWaits(tx), 'the page waits for the delete between its reads');
      });
      const res = await page;
      assert.equal(res.statusCode, 404, `a page read beside the delete: ${res.body}`);
      assert.equal(res.json().error.code, 'resource_not_found');
    } else {
      await call(t, s.secret, 'DELETE', `/v1/lists/${list.id}`);
    }
    const after = await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`);
    assert.equal(after.statusCode, 404);
    assert.equal(after.json().error.param, 'listId');
  });
});
