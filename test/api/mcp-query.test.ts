// The query string of read_from_rolodex (docs/mcp.md §What a tool can reach), on both databases:
// the path's own `?query` goes to the REST call as written, so an escape the API refuses over
// HTTP (`%E9`, a lone `%`, half of a surrogate pair) is refused through the tool with the same
// error, never repaired into another value that finds nothing; a `query` object's keys and values
// are encoded as UTF-8, a lone surrogate as the bytes the API refuses as it refuses them over HTTP.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, test } from 'node:test';
import { call, eachDialect, headers, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { rpc, toolOutcome } from '../helpers/mcp.ts';

eachDialect('mcp query strings', (ctx) => {
  let s: Seeded;
  before(async () => {
    const t = ctx();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    s = await seedWorkspace(t);
    for (const $name of ['Café', 'Acme Corp', '100%', 'a+b'])
      assert.equal((await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name } })).statusCode, 200);
  });

  /** read_from_rolodex with `args`, JSON text as sent (a lone surrogate can only be written so). */
  const read = async (args: string) =>
    toolOutcome(await rpc(ctx(), s.secret, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_from_rolodex","arguments":${args}}}`));
  /** The REST answer to GET `url`, as an HTTP client sends it. */
  const rest = async (url: string) => {
    const res = await ctx().app.inject({ method: 'GET', url, headers: headers(s.secret) });
    return { isError: res.statusCode >= 400, body: res.json() };
  };
  const same = (got: { isError: boolean; body: any }, want: { isError: boolean; body: any }, what: string) => {
    const plain = (b: any) => (b.error ? { ...b.error, requestId: '' } : b);
    assert.deepEqual([got.isError, plain(got.body)], [want.isError, plain(want.body)], what);
  };
  const names = (body: any) => body.data.map((r: any) => r.fields.$name.value);

  test("a path's own query with escapes REST refuses is refused with the REST error", async () => {
    for (const query of ['$name[equal]=100%', '$name[equal]=Caf%E9', '$name[equal]=%C3', '$name[equal]=%ED%A0%80', 'limit=%zz', '$name%ZZ=x']) {
      const want = await rest(`/v1/accounts?${query}`);
      assert.equal(want.isError, true, query);
      assert.equal(want.body.error.code, 'invalid_parameter', query);
      same(await read(JSON.stringify({ path: `/v1/accounts?${query}` })), want, query);
    }
  });

  test("a path's own query as written finds what REST finds: + is a space, UTF-8 escapes or raw non-ASCII", async () => {
    for (const [query, url, found] of [
      ['$name[equal]=Acme+Corp', '/v1/accounts?$name[equal]=Acme+Corp', ['Acme Corp']],
      ['$name[equal]=Caf%C3%A9', '/v1/accounts?$name[equal]=Caf%C3%A9', ['Café']],
      ['$name[equal]=Café', '/v1/accounts?$name[equal]=Caf%C3%A9', ['Café']],
      ['$name[equal]=100%25', '/v1/accounts?$name[equal]=100%25', ['100%']],
      ['$name[equal]=a%2Bb', '/v1/accounts?$name[equal]=a%2Bb', ['a+b']],
    ] as const) {
      const want = await rest(url);
      assert.deepEqual(names(want.body), found, url);
      same(await read(JSON.stringify({ path: `/v1/accounts?${query}` })), want, query);
    }
  });

  test('a query object is sent as its values: a % or + is itself; a lone surrogate is refused as REST refuses its bytes', async () => {
    for (const $name of ['100%', 'a+b', 'Café', 'Acme Corp']) {
      const got = await read(JSON.stringify({ path: '/v1/accounts', query: { '$name[equal]': $name } }));
      assert.equal(got.isError, false, JSON.stringify(got.body));
      assert.deepEqual(names(got.body), [$name]);
    }
    const want = await rest('/v1/accounts?$name[equal]=%ED%A0%80');
    same(await read('{"path":"/v1/accounts","query":{"$name[equal]":"\\ud800"}}'), want, 'a lone surrogate in a value');
    same(await read('{"path":"/v1/accounts","query":{"$name[equal]":["Caf\\udc00"]}}'), await rest('/v1/accounts?$name[equal]=Caf%ED%B0%80'), 'in an array');
    const key = await read('{"path":"/v1/accounts","query":{"\\ud800":"x"}}');
    same(key, await rest('/v1/accounts?%ED%A0%80=x'), 'a lone surrogate in a key');
    same(await read('{"path":"/v1/accounts?$name[equal]=\\ud800"}'), want, "a lone surrogate in the path's query");
  });

  test('a request line and headers over the HTTP limit are refused as over HTTP (431 headers_too_large), never sent', async () => {
    // docs/errors.md §Before routing: a URL over 16 KiB never reaches the API over HTTP.
    const t = ctx();
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    for (const args of [
      { path: '/v1/accounts', query: { '$name[equal]': 'a'.repeat(20_000) } },
      { path: '/v1/accounts', query: { limit: Array(3000).fill(1) } },
    ]) {
      const url = `/v1/accounts?${Object.entries(args.query)
        .flatMap(([k, v]) => [v].flat().map((x) => `${encodeURIComponent(k)}=${String(x)}`))
        .join('&')}`;
      const over = await fetch(`${base}${url}`, { headers: headers(s.secret) });
      assert.equal(over.status, 431);
      const want = { isError: true, body: (await over.json()) as any };
      assert.equal(want.body.error.code, 'headers_too_large');
      same(await read(JSON.stringify(args)), want, url.slice(0, 40));
    }
    // Under the limit the REST call is made and answers for itself.
    const under = await read(JSON.stringify({ path: '/v1/accounts', query: { '$name[equal]': 'a'.repeat(15_000) } }));
    assert.equal(under.body.error.code, 'invalid_parameter');
    // A write's body counts for nothing: only its request line and headers are held to the limit.
    const write = toolOutcome(
      await rpc(t, s.secret, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'write_to_rolodex', arguments: { path: '/v1/accounts', body: { fields: { $name: 'x'.repeat(20_000) } } } },
      }),
    );
    assert.deepEqual([write.body.error.code, write.body.error.param], ['invalid_value', 'fields.$name']);
  });
});
