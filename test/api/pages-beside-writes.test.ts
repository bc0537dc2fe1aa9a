// A page read while a write commits (docs/pages.md §Pages read in two steps) on both databases: a
// record page, a filtered one and a list's member page each answer rows that agree with their
// totalCount (a full page, or the rest of the listing), never a page one row short because a
// record went to the trash between the read of its ids and the read of the records, nor a count
// taken before a create beside rows read after it. On PostgreSQL a page is also held between its
// two reads while a delete commits, so that the page always meets the write, not only when the
// turns fall that way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { trashRecord } from '../../src/trash/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

const LIMIT = 2;

eachDialect('pages beside writes', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  /** Sends the page and the write in the same turn, so the write commits while the page is read. */
  async function pageBeside(s: Seeded, url: string, write: () => Promise<unknown>) {
    const [page] = await Promise.all([ok(s, 'GET', `${url}${url.includes('?') ? '&' : '?'}limit=${LIMIT}`), write()]);
    return page as { data: Array<{ id: string }>; totalCount: number };
  }
  function agrees(url: string, page: { data: Array<{ id: string }>; totalCount: number }) {
    assert.equal(page.data.length, Math.min(LIMIT, page.totalCount), `${url}: ${page.data.length} rows of ${page.totalCount}`);
    assert.equal(new Set(page.data.map((r) => r.id)).size, page.data.length, `${url}: a row twice`);
  }

  test('a record moved to the trash while a page is read: the page still agrees with its count', async () => {
    const s = await seedWorkspace(ctx());
    for (let i = 0; i < 3; i++) await ok(s, 'POST', '/v1/accounts', { fields: { $name: `base ${i}` } });
    const list = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'account' } });
    for (const url of ['/v1/accounts', '/v1/accounts?$name[startsWith]=', `/v1/lists/${list.id}/accounts`]) {
      for (let i = 0; i < 8; i++) {
        const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: `gone ${i}` } });
        await ok(s, 'POST', `/v1/lists/${list.id}`, { relationships: { $accounts: { add: [acc.id] } } });
        agrees(url, await pageBeside(s, url, () => ok(s, 'DELETE', `/v1/accounts/${acc.id}`)));
      }
    }
  });

  test('PostgreSQL: a page held between the read of its ids and that of its records while a delete commits agrees with its count', async () => {
    const t = ctx();
    if (t.deps.db.dialect !== 'postgres') return; // one writer, and a read sees one snapshot: nothing commits between the steps
    const s = await seedWorkspace(t);
    for (let i = 0; i < 3; i++) await ok(s, 'POST', '/v1/accounts', { fields: { $name: `base ${i}` } });
    const list = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'account' } });
    for (const url of ['/v1/accounts', '/v1/accounts?$name[startsWith]=', `/v1/lists/${list.id}/accounts`]) {
      const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'gone' } });
      await ok(s, 'POST', `/v1/lists/${list.id}`, { relationships: { $accounts: { add: [acc.id] } } });
      let page!: Promise<{ data: Array<{ id: string }>; totalCount: number }>;
      await write(t.deps.db.kysely, async (tx) => {
        await trashRecord(operatorCtx(tx, s.workspaceId), RECORD_TYPES.account, {
          id: acc.id,
        });
        // The records of a page are read after its ids, beginning with their links: the page reads
        // its ids with the record still live, then waits here until the delete commits.
        await sql`lock table entity_relationships in access exclusive mode`.execute(tx);
        page = ok(s, 'GET', `${url}${url.includes('?') ? '&' : '?'}limit=${LIMIT}`);
        assert.ok(await someoneWaits(tx), `${url}: the page waits for the delete between its reads`);
      });
      const read = await page;
      agrees(url, read);
      assert.ok(!read.data.some((r) => r.id === acc.id), `${url}: the deleted record is not on the page`);
    }
  });

  test('a record created while a filtered page is read: the count and the rows agree', async () => {
    const s = await seedWorkspace(ctx());
    for (let i = 0; i < 8; i++) {
      const url = '/v1/accounts?$name[startsWith]=a';
      agrees(url, await pageBeside(s, url, () => ok(s, 'POST', '/v1/accounts', { fields: { $name: `a ${i}` } })));
    }
  });
});
