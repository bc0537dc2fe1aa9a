// Numbers at their limits through HTTP, on both databases (docs/errors.md §Numbers in bodies,
// docs/records.md §Numbers): a literal that a double does not hold as written is refused with
// 400 invalid_value naming its place and nothing is written, where JSON.parse alone made it
// Infinity or another integer; what the API answers is taken back, as a body and as a filter; a
// filter operand follows the same rule.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, headers, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';

/** POSTs `text` as it is: JSON.stringify could not write the literals these tests send. */
function raw(t: TestApp, s: Seeded, url: string, text: string) {
  return t.app.inject({ method: 'POST', url, headers: headers(s.secret, { 'content-type': 'application/json' }), payload: text });
}

eachDialect('numbers in bodies and filters', (ctx) => {
  async function seeded(): Promise<Seeded> {
    const t = ctx();
    const s = await seedWorkspace(t);
    const c = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(c, { objectType: 'account', key: 'n', label: 'N', valueType: 'NUMBER' });
    await addField(c, { objectType: 'account', key: 'cur', label: 'Cur', valueType: 'CURRENCY' });
    return s;
  }
  async function found(s: Seeded, query: string): Promise<string[]> {
    const res = await call(ctx(), s.secret, 'GET', `/v1/accounts?${query}`);
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return res.json().data.map((d: { id: string }) => d.id);
  }

  test('an integer beyond 2^53 that no double is, and a number beyond the range of a double, are refused naming their place; nothing is written', async () => {
    const t = ctx();
    const s = await seeded();
    const made = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A', n: 5, cur: 7 } });
    const id = made.json().id as string;
    const cases: Array<[string, string, string]> = [
      ['n', '12345678901234567890', 'reads as 12345678901234567000'],
      ['n', '9007199254740993', 'reads as 9007199254740992'],
      ['cur', '-9007199254740993', 'reads as -9007199254740992'],
      ['n', '100000000000000000000000000000', 'reads as 1e+29'],
      ['cur', '1e400', 'beyond the range'],
      ['n', '-1e309', 'beyond the range'],
      ['n', '17976931348623159e292', 'beyond the range'],
    ];
    for (const [key, literal, why] of cases) {
      for (const [url, body] of [
        ['/v1/accounts', `{"fields":{"$name":"B","${key}":${literal}}}`],
        [`/v1/accounts/${id}`, `{"fields":{"${key}":${literal}}}`],
      ] as const) {
        const res = await raw(t, s, url, body);
        assert.equal(res.statusCode, 400, `${body}: ${res.body}`);
        const error = res.json().error;
        assert.deepEqual([error.code, error.param], ['invalid_value', `fields.${key}`], res.body);
        assert.ok(error.message.includes(literal) && error.message.includes(why), error.message);
      }
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 1);
    const fields = (await call(t, s.secret, 'GET', `/v1/accounts/${id}`)).json().fields;
    assert.deepEqual([fields.n.value, fields.cur.value], [5, 7]);

    // Anywhere in a body: a member of an address, a file's size.
    const lat = await raw(t, s, '/v1/accounts', '{"fields":{"$name":"C","$primaryAddress":{"latitude":1e400}}}');
    assert.deepEqual([lat.statusCode, lat.json().error.code, lat.json().error.param], [400, 'invalid_value', 'fields.$primaryAddress.latitude']);
    const size = await raw(t, s, '/v1/files', '{"filename":"a.txt","mimeType":"text/plain","sizeBytes":12345678901234567890}');
    assert.deepEqual([size.statusCode, size.json().error.code, size.json().error.param], [400, 'invalid_value', 'sizeBytes'], size.body);
  });

  test('what the API answers is taken back: exact large integers, the shortest form of a double, decimals rounded as JSON rounds them, -0 as 0', async () => {
    const t = ctx();
    const s = await seeded();
    const cases: Array<[string, number]> = [
      ['9007199254740991', 9007199254740991],
      ['9007199254740992', 9007199254740992],
      ['12345678901234567000', 12345678901234567000],
      ['1000000000000000000000', 1e21],
      ['1e21', 1e21],
      ['12345678901234567890.5', 12345678901234567000],
      ['123.456789012345678901234', 123.45678901234568],
      ['1234567890123.45', 1234567890123.45],
      ['9999999999999.99', 9999999999999.99],
      ['19.90', 19.9],
      ['1e308', 1e308],
      ['1.7976931348623157e308', Number.MAX_VALUE],
      ['-1.7976931348623157e308', -Number.MAX_VALUE],
      ['5e-324', Number.MIN_VALUE],
      ['1e-400', 0],
      ['-0', 0],
    ];
    for (const [literal, want] of cases) {
      const res = await raw(t, s, '/v1/accounts', `{"fields":{"$name":"${literal}","n":${literal},"cur":${literal}}}`);
      assert.equal(res.statusCode, 200, `${literal}: ${res.body}`);
      const made = res.json();
      // The answer as sent: the text of the number, not only the number JSON.parse makes of it.
      assert.ok(res.body.includes(`"n":{"value":${String(want)},`), `${literal}: ${res.body}`);
      assert.deepEqual([made.fields.n.value, made.fields.cur.value], [want, want]);
      const again = await raw(t, s, `/v1/accounts/${made.id}`, `{"fields":{"n":${String(want)}}}`);
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().updatedAt, made.updatedAt, `${literal}: writing back the answer changes nothing`);
      assert.ok((await found(s, `n=${encodeURIComponent(String(want))}`)).includes(made.id), literal);
    }
  });

  test('a filter operand that no double is is refused, never matched against another number', async () => {
    const t = ctx();
    const s = await seeded();
    const near = await raw(t, s, '/v1/accounts', '{"fields":{"$name":"near","n":12345678901234567000}}');
    assert.equal(near.statusCode, 200, near.body);
    for (const [key, value] of [
      ['n', '12345678901234567890'],
      ['n[greaterThan]', '9007199254740993'],
      ['cur[lessThanOrEqual]', '-12345678901234567890'],
      ['n[-equal]', '+012345678901234567891'],
    ]) {
      const res = await call(t, s.secret, 'GET', `/v1/accounts?${encodeURIComponent(key!)}=${encodeURIComponent(value!)}`);
      assert.equal(res.statusCode, 400, `${key}=${value}: ${res.body}`);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_parameter', key]);
      assert.ok(res.json().error.message.includes('9007199254740991'), res.json().error.message);
    }
    assert.deepEqual(await found(s, 'n=12345678901234567000'), [near.json().id]);
    assert.deepEqual(await found(s, 'n=%2B0012345678901234567000'), [near.json().id]);
  });
});
