// Numbers at their limits in MCP tool arguments, on both databases (docs/mcp.md §Tools,
// docs/errors.md §Numbers in bodies): a number that a double does not hold as written reaches the
// tool's REST call as the agent wrote it, which refuses it as over HTTP, where the SDK's parse made
// 1e400 Infinity (sent on as `null`, which cleared the field) and a long integer another number.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, headers, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rpc, toolOutcome } from '../helpers/mcp.ts';

/** The tool error or result of one tools/call whose arguments are `args`, JSON text as sent. */
async function callTool(t: TestApp, secret: string, name: string, args: string): Promise<{ isError: boolean; body: any }> {
  return toolOutcome(await rpc(t, secret, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`, name));
}

eachDialect('numbers in MCP tool arguments', (ctx) => {
  let s: Seeded;
  let id: string;
  before(async () => {
    const t = ctx();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'n', label: 'N', valueType: 'NUMBER' });
    id = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A', n: 5 } })).json().id;
  });

  test('a body number beyond the range of a double, or an integer no double is, is the REST refusal; the field keeps its value', async () => {
    const t = ctx();
    for (const literal of ['1e400', '-1e400', '12345678901234567890']) {
      for (const path of [`/v1/accounts/${id}`, '/v1/accounts']) {
        const body = path === '/v1/accounts' ? `{"fields":{"$name":"B","n":${literal}}}` : `{"fields":{"n":${literal}}}`;
        const got = await callTool(t, s.secret, 'write_to_rolodex', `{"path":"${path}","body":${body}}`);
        assert.equal(got.isError, true, `${literal}: ${JSON.stringify(got.body)}`);
        assert.deepEqual([got.body.error.code, got.body.error.param], ['invalid_value', 'fields.n'], JSON.stringify(got.body));
        assert.ok(got.body.error.message.includes(literal), got.body.error.message);
      }
    }
    const now = await call(t, s.secret, 'GET', `/v1/accounts/${id}`);
    assert.equal(now.json().fields.n.value, 5);
    assert.equal(now.json().updatedAt, now.json().createdAt);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 1);

    // A body too deep for the reviver (which recurses) is still the REST call's: refused for its depth.
    const deep = `{"fields":{"$name":"Deep","n":12345678901234567890},"extra":${'{"a":'.repeat(99_999)}{}${'}'.repeat(99_999)}}`;
    const tooDeep = await callTool(t, s.secret, 'write_to_rolodex', `{"path":"/v1/accounts","body":${deep}}`);
    const rest = await t.app.inject({ method: 'POST', url: '/v1/accounts', headers: headers(s.secret, { 'content-type': 'application/json' }), payload: deep });
    assert.equal(tooDeep.isError, true);
    assert.deepEqual({ ...tooDeep.body.error, requestId: '' }, { ...rest.json().error, requestId: '' });

    // A kept number is a value, not a level: a body as deep as REST takes, with such a number at
    // its deepest level, is refused for the number, as over REST, never for its depth.
    const nested = `{"fields":{"$name":"Deep"},"extra":${'{"a":'.repeat(62)}{"n":1e400}${'}'.repeat(62)}}`;
    const atLimit = await callTool(t, s.secret, 'write_to_rolodex', `{"path":"/v1/accounts","body":${nested}}`);
    const restAtLimit = await t.app.inject({
      method: 'POST',
      url: '/v1/accounts',
      headers: headers(s.secret, { 'content-type': 'application/json' }),
      payload: nested,
    });
    assert.equal(restAtLimit.json().error.code, 'invalid_value');
    assert.equal(atLimit.isError, true);
    assert.deepEqual({ ...atLimit.body.error, requestId: '' }, { ...restAtLimit.json().error, requestId: '' });

    // What the API answers goes back through a tool unchanged.
    const ok = await callTool(t, s.secret, 'write_to_rolodex', `{"path":"/v1/accounts/${id}","body":{"fields":{"n":12345678901234567000}}}`);
    assert.equal(ok.isError, false, JSON.stringify(ok.body));
    assert.equal(ok.body.fields.n.value, 12345678901234567000);
  });

  test('a query value goes on as written, for the REST call to judge; another argument is judged by its type and range', async () => {
    const t = ctx();
    const filter = await callTool(t, s.secret, 'read_from_rolodex', '{"path":"/v1/accounts","query":{"n":12345678901234567890}}');
    assert.equal(filter.isError, true, JSON.stringify(filter.body));
    assert.deepEqual([filter.body.error.code, filter.body.error.param], ['invalid_parameter', 'n']);
    const repeated = await callTool(t, s.secret, 'read_from_rolodex', '{"path":"/v1/accounts","query":{"n":[5, 9007199254740993]}}');
    assert.deepEqual([repeated.isError, repeated.body.error?.code, repeated.body.error?.param], [true, 'invalid_parameter', 'n']);
    const offset = await callTool(t, s.secret, 'read_from_rolodex', '{"path":"/v1/accounts","query":{"offset":1e400}}');
    assert.deepEqual([offset.isError, offset.body.error?.code, offset.body.error?.param], [true, 'invalid_parameter', 'offset']);
    const found = await callTool(t, s.secret, 'read_from_rolodex', '{"path":"/v1/accounts","query":{"n":5,"limit":25}}');
    assert.equal(found.isError, false, JSON.stringify(found.body));
    // Another argument is judged by the tool's check as JSON.parse reads it: its type, then its range.
    for (const literal of ['1e400', '12345678901234567890']) {
      const limit = await callTool(t, s.secret, 'search_api_docs', `{"query":"accounts","limit":${literal}}`);
      assert.equal(limit.isError, true);
      assert.deepEqual([limit.body.error.code, limit.body.error.param], ['invalid_value', 'limit'], JSON.stringify(limit.body));
      const path = await callTool(t, s.secret, 'read_from_rolodex', `{"path":${literal}}`);
      assert.deepEqual([path.isError, path.body.error?.code, path.body.error?.param], [true, 'invalid_type', 'path'], JSON.stringify(path.body));
      const body = await callTool(t, s.secret, 'write_to_rolodex', `{"path":"/v1/accounts","body":${literal}}`);
      assert.deepEqual([body.isError, body.body.error?.code, body.body.error?.param], [true, 'invalid_type', 'body'], JSON.stringify(body.body));
    }
  });
});
