// Pagination and order of list memberships and lists (docs/design.md §Pagination and order): limit
// and offset bounds, pages at every offset agree, newest member first with ties by id, kept counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { assertError, seedRecords, sleep } from '../helpers/lists-fixtures.ts';
import { newestFirst } from '../helpers/order.ts';

eachDialect('lists pagination', (ctx) => {
  test('limit and offset: bounds, boundaries, pages from both ends agree with newest-first order', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids = await seedRecords(t, s.workspaceId, 'contact', 30);
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'p', $objectType: 'contact' } })).json();
    // Three batches at distinct times: newest batch first, inside a batch ties broken by id (descending).
    const batches = [ids.slice(0, 10), ids.slice(10, 20), ids.slice(20, 30)];
    for (const b of batches) {
      assert.equal((await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { relationships: { $contacts: { add: b } } })).statusCode, 200);
      await sleep(3);
    }
    const expected = [...batches].reverse().flatMap((b) => [...b].sort().reverse());
    const url = (q: string) => `/v1/lists/${list.id}/contacts?${q}`;
    const page = async (q: string) => {
      const r = await call(t, s.secret, 'GET', url(q));
      assert.equal(r.statusCode, 200, r.body);
      const j = r.json();
      assert.equal(j.totalCount, 30);
      assert.equal(j.object, 'list');
      return j.data.map((e: { id: string }) => e.id);
    };
    assert.deepEqual(await page(''), expected.slice(0, 25));
    assert.deepEqual(await page('limit=25&offset=25'), expected.slice(25));
    assert.deepEqual(await page('limit=1'), expected.slice(0, 1));
    for (let offset = 0; offset < 30; offset++) assert.deepEqual(await page(`limit=1&offset=${offset}`), [expected[offset]], `offset ${offset}`);
    assert.deepEqual(await page('limit=7&offset=20'), expected.slice(20, 27));
    assert.deepEqual(await page('limit=25&offset=29'), expected.slice(29));
    assert.deepEqual(await page('offset=30'), []);
    assert.deepEqual(await page('offset=1000'), []);
    for (const [q, param] of [
      ['limit=26', 'limit'],
      ['limit=0', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=ten', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
      ['other=1', 'other'],
    ] as [string, string][]) {
      assertError(await call(t, s.secret, 'GET', url(q)), 400, 'invalid_parameter', param);
      assertError(await call(t, s.secret, 'GET', `/v1/lists?${q}`), 400, 'invalid_parameter', param);
    }
  });

  test('a re-added member moves to the front; a removed one leaves the count', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [a, b, c] = await seedRecords(t, s.workspaceId, 'account', 3);
    const list = (
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'p', $objectType: 'account' }, relationships: { $accounts: [a, b] } })
    ).json();
    await sleep(3);
    await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { relationships: { $accounts: { add: c } } });
    let r = (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/accounts`)).json();
    assert.deepEqual(
      r.data.map((e: { id: string }) => e.id),
      [c, ...[a, b].sort().reverse()],
    );
    await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { relationships: { $accounts: { remove: a } } });
    await sleep(3);
    await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { relationships: { $accounts: { add: [a] } } });
    r = (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/accounts`)).json();
    assert.deepEqual(
      r.data.map((e: { id: string }) => e.id),
      [a, c, b],
    );
    assert.equal(r.totalCount, 3);
  });

  test('GET /v1/lists pages agree from both ends; the kept count matches', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (let i = 0; i < 27; i++) await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: `l${i}`, $objectType: 'opportunity' } });
    const all = [...(await call(t, s.secret, 'GET', '/v1/lists')).json().data, ...(await call(t, s.secret, 'GET', '/v1/lists?offset=25')).json().data];
    assert.equal(all.length, 27);
    const sorted = [...all].sort(newestFirst);
    assert.deepEqual(all, sorted);
    for (const offset of [0, 13, 14, 26]) {
      const r = (await call(t, s.secret, 'GET', `/v1/lists?limit=1&offset=${offset}`)).json();
      assert.equal(r.totalCount, 27);
      assert.equal(r.data[0].id, all[offset].id, `offset ${offset}`);
    }
  });
});
