// The ids of a POST's requests (docs/mcp.md §Sessions): each request of a batch needs an id of its
// own, as MCP requires of a sender's ids; a batch in which two requests share one is refused whole,
// 400 with the JSON-RPC error -32600, and none of its messages reaches a tool, so that no call runs
// whose answer the client could not tell from another's. Ids compare as JSON values: 1 and "1"
// are two.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, test } from 'node:test';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { postMcp, toolCall } from '../helpers/mcp.ts';

const create = (id: number | string, name: string) => ({ ...toolCall(0, 'write_to_rolodex', { path: '/v1/accounts', body: { fields: { $name: name } } }), id });
const DUPLICATE = { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: Each request of a batch must have an id of its own' }, id: null };

async function accounts(t: TestApp, secret: string): Promise<string[]> {
  const res = await call(t, secret, 'GET', '/v1/accounts');
  return (res.json().data as { fields: { $name: { value: string } } }[]).map((a) => a.fields.$name.value).sort();
}

eachDialect('mcp request ids', (ctx) => {
  let s: Seeded;
  before(async () => {
    const t = ctx();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    s = await seedWorkspace(t);
  });

  test('a batch whose requests share an id is refused whole, 400 -32600, and writes nothing', async () => {
    const t = ctx();
    for (const batch of [
      [create(1, 'a'), create(1, 'b')],
      [create('x', 'c'), { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'x', method: 'ping' }],
      [{ jsonrpc: '2.0', id: 2, method: 'ping' }, create(3, 'd'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }],
    ]) {
      const res = await postMcp(t, s.secret, batch);
      assert.equal(res.status, 400, JSON.stringify(batch));
      assert.deepEqual(await res.json(), DUPLICATE);
    }
    // A refused batch runs nothing, not even later: no account appears.
    await sleep(100);
    assert.deepEqual(await accounts(t, s.secret), []);
  });

  test('ids of different JSON types are different ids; a response from the client shares none', async () => {
    const t = ctx();
    const own = await seedWorkspace(t);
    const res = await postMcp(t, own.secret, [create(1, 'one'), create('1', 'one as text'), { jsonrpc: '2.0', id: 1, result: {} }]);
    assert.equal(res.status, 200);
    const answers = (await res.json()) as { id: unknown; result: { isError?: boolean } }[];
    assert.deepEqual(
      answers.map((a) => [a.id, a.result.isError ?? false]),
      [
        [1, false],
        ['1', false],
      ],
    );
    assert.deepEqual(await accounts(t, own.secret), ['one', 'one as text']);
  });
});
