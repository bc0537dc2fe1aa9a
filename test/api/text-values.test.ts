// Text as integrators in other countries and scripts send it, through the API on both databases:
// a telephone number has one stored form whatever digits and invisible marks it was written with
// (docs/records.md §Telephone numbers), and a query string is percent-encoded UTF-8 or refused
// (docs/errors.md §Query parameters).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('text values', (ctx) => {
  async function write(s: Seeded, body: unknown) {
    return call(ctx(), s.secret, 'POST', '/v1/accounts', body);
  }
  async function found(s: Seeded, key: string, value: string): Promise<string[]> {
    const res = await call(ctx(), s.secret, 'GET', `/v1/accounts?${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data.map((d: { id: string }) => d.id);
  }

  test("a telephone extension written in another script's digits is stored in ASCII digits, one value for unique and filters", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'phone', label: 'Phone', valueType: 'TELEPHONE', unique: true });
    // Arabic-Indic and Extended Arabic-Indic digits, as a phone's keyboard in Egypt or Iran types them.
    const made = await write(s, { fields: { $name: 'A', phone: '+٤٩ ٣٠ ١٢٣٤٥٦٧ ext. ١٢' } });
    assert.equal(made.statusCode, 200, made.body);
    assert.equal(made.json().fields.phone.value, '+49301234567;ext=12');
    const persian = await write(s, { fields: { $name: 'B', phone: '+49 30 1234567 x۱۲' } });
    assert.equal(persian.statusCode, 409, persian.body);
    assert.deepEqual([persian.json().error.code, persian.json().error.param], ['duplicate_value', 'fields.phone']);
    assert.deepEqual(await found(s, 'phone', '+49 30 1234567 ext. 12'), [made.json().id]);
    assert.deepEqual(await found(s, 'phone[contains]', 'ext=12'), [made.json().id]);
  });

  test('a telephone number copied with bidi marks, a zero-width space, full-width forms or white space around it is the number', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), {
      objectType: 'account',
      key: 'phone',
      label: 'Phone',
      valueType: 'TELEPHONE',
      multipleValues: true,
    });
    const written = [
      '\u200e+49 30 1234567\u200e', // left-to-right marks, as a right-to-left page wraps a number
      '\u202a+49 30 1234568\u202c', // an embedding and its end
      '\u2066+49 30 1234569\u2069', // an isolate and its end
      '+49\u200b30 1234570', // a zero-width space
      '＋４９ ３０ １２３４５７１', // full-width plus and digits
      ' +49 30 1234572\t', // white space around it, as around a URL
    ];
    const made = await write(s, { fields: { $name: 'A', phone: written } });
    assert.equal(made.statusCode, 200, made.body);
    const stored = ['+49301234567', '+49301234568', '+49301234569', '+49301234570', '+49301234571', '+49301234572'];
    assert.deepEqual(made.json().fields.phone.value, stored);
    // A filter value is read the same way, so that what was written finds what was stored.
    for (const w of written) assert.deepEqual(await found(s, 'phone[contains]', w), [made.json().id], JSON.stringify(w));
    // A value with no number in it is still refused, naming the field.
    for (const bad of ['\u200e', '\u202e+49 30\u202c x']) {
      const res = await write(s, { fields: { $name: 'B', phone: bad } });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_value', 'fields.phone']);
    }
  });

  test('a query key or value that is not percent-encoded UTF-8 is refused naming its key, as such a path is', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const cafe = await write(s, { fields: { $name: 'Café' } });
    assert.equal(cafe.statusCode, 200, cafe.body);
    // The same name stored as written with the raw escapes, which the query parser would look for.
    const raw = await write(s, { fields: { $name: 'Caf%E9' } });
    assert.equal(raw.statusCode, 200, raw.body);
    const get = (query: string) => call(t, s.secret, 'GET', `/v1/accounts?${query}`);
    for (const [query, param] of [
      ['%24name=Caf%E9', '$name'], // é in Latin-1, as a client that encodes in ISO-8859-1 sends it
      ['%24name%5BstartsWith%5D=Caf%C3', '$name[startsWith]'], // a UTF-8 sequence cut short
      ['%24name=%ED%A0%80', '$name'], // half of a surrogate pair
      ['%24name=%C0%AF', '$name'], // an overlong form
      ['limit=5&%24name=100%zz', '$name'], // % without two hex digits
      ['%FF=1', '%FF'], // a key that is no text: named as sent
      ['limit=%FF', 'limit'],
    ] as const) {
      const res = await get(query);
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_parameter', param], query);
      assert.match(res.json().error.message, /not valid percent-encoded UTF-8/);
    }
    // The same refusal on an operation that reads no filters, and for a retrieve's query.
    const lists = await call(t, s.secret, 'GET', '/v1/lists?limit=1&x=%E9');
    assert.deepEqual([lists.statusCode, lists.json().error.param], [400, 'x']);
    const one = await call(t, s.secret, 'GET', `/v1/accounts/${cafe.json().id}?x=%E9`);
    assert.deepEqual([one.statusCode, one.json().error.param], [400, 'x']);
    // Well-formed escapes and `+` for a space are read as always.
    assert.deepEqual(await found(s, '$name', 'Café'), [cafe.json().id]);
    const plus = await get('%24name%5BstartsWith%5D=Caf%25');
    assert.deepEqual(
      plus.json().data.map((d: { id: string }) => d.id),
      [raw.json().id],
    );
  });

  test("a long filter key is shown cut at a character in the error's message, never inside a surrogate pair", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const key = `${'a'.repeat(79)}😀${'b'.repeat(20)}`;
    const res = await call(t, s.secret, 'GET', `/v1/accounts?${encodeURIComponent(key)}=1`);
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_parameter', key]);
    const message: string = res.json().error.message;
    assert.ok(message.isWellFormed(), JSON.stringify(message));
    assert.ok(message.includes(`${'a'.repeat(79)}😀…`), message);
  });
});
