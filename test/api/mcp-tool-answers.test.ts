// What the tools that make no API call answer an agent (docs/mcp.md §Tools), on both databases:
// get_current_user's name of a member whose name is not known, and the value formats that
// search_api_docs finds by words, in any script.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { VALUE_TYPES } from '../../src/lib/value-types.ts';
import { createUser } from '../../src/users/service.ts';
import { call, eachDialect, keyFor, seedWorkspace, type Seeded } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';

eachDialect('mcp tool answers', (ctx) => {
  let s: Seeded;
  before(async () => {
    const t = ctx();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    s = await seedWorkspace(t);
  });

  test("get_current_user: the name's known parts, null when neither is known; the member keeps its FullName object", async () => {
    const t = ctx();
    const ops = operatorCtx(t.deps.db.kysely, s.workspaceId);
    const named = await createUser(ops, { email: `n${Date.now()}@example.test`, name: 'Ann Marie Lee' });
    const lastOnly = await createUser(ops, { email: `l${Date.now()}@example.test`, lastName: 'Xu' });
    // The seeded user was created without a name.
    const cases: Array<[string, string, unknown]> = [
      [s.secret, s.userId, null],
      [await keyFor(t, s.workspaceId, named.id), named.id, { firstName: 'Ann', lastName: 'Marie Lee' }],
      [await keyFor(t, s.workspaceId, lastOnly.id), lastOnly.id, { lastName: 'Xu' }],
    ];
    for (const [secret, id, name] of cases) {
      const me = await callTool(t, secret, 'get_current_user', {});
      assert.equal(me.isError, false);
      assert.deepEqual([me.body.id, me.body.name], [id, name]);
      // The member resource's $name is a FullName object whatever is known (docs/design.md §Members).
      const member = await call(t, s.secret, 'GET', `/v1/members/${id}`);
      assert.deepEqual(member.json().fields.$name.value, name ?? {});
    }
  });

  test('search_api_docs finds the format a value of each valueType is written in; a write operation carries them', async () => {
    const t = ctx();
    const search = async (query: string) => {
      const r = await callTool(t, s.secret, 'search_api_docs', { query });
      assert.equal(r.isError, false, query);
      return r.body.valueFormats as Array<{ valueType: string; format: string }>;
    };
    // The best match first, holding the rule an agent needs to write the value (docs/records.md §Writing fields).
    const best: Array<[string, string, string[]]> = [
      ['phone number format', 'TELEPHONE', ['E.164', ';ext=']],
      ['address', 'ADDRESS', ['street', 'postalCode', 'country', 'ISO 3166-1']],
      ['full name', 'FULL_NAME', ['firstName', 'lastName', 'null']],
      ['social handle linkedin', 'SOCIAL_HANDLE', ['https://linkedin.com/in/']],
      ['currency amount', 'CURRENCY', ['number', 'ISO 4217']],
      ['datetime time zone', 'DATETIME', ['ISO 8601', 'UTC']],
      ['multi select', 'MULTI_SELECT', ['array', 'label']],
    ];
    for (const [query, valueType, parts] of best) {
      const found = await search(query);
      assert.equal(found[0]?.valueType, valueType, `${query}: ${JSON.stringify(found.map((f) => f.valueType))}`);
      for (const part of parts) assert.ok((found[0]?.format ?? '').includes(part), `${valueType} names ${part}: ${found[0]?.format ?? ''}`);
    }
    // Words of no value type find none, and the catalogue without words holds every one.
    assert.deepEqual(await search('retrieve channel'), []);
    const every = await callTool(t, s.secret, 'search_api_docs', {});
    assert.deepEqual(every.body.valueFormats.map((f: any) => f.valueType).sort(), [...VALUE_TYPES].sort());
    // The same rules are in the request body of a record write, for a client that reads the operation.
    const details = await callTool(t, s.secret, 'get_api_details', { operationId: 'createContact' });
    const value = String(details.body.requestBody.properties.fields.additionalProperties.description);
    for (const part of ['TELEPHONE', 'E.164', 'ADDRESS', 'FULL_NAME']) assert.ok(value.includes(part), `${part} in ${value}`);
  });

  test('search_api_docs reads a word of any script as a word: one that no operation holds finds nothing, never every operation', async () => {
    const t = ctx();
    const all = await callTool(t, s.secret, 'search_api_docs', {});
    assert.ok(all.body.total > 25, 'no words: every operation');
    // A letter outside a-z is part of its word, not a mark the query is split at (docs/mcp.md
    // §Search words): "müller" is one word, not "m" and "ller"; "日本" and "ü" are words too.
    for (const query of ['ü', '日本', 'müller', 'Zoë', 'контакт', 'ü?']) {
      const r = await callTool(t, s.secret, 'search_api_docs', { query });
      assert.equal(r.isError, false, query);
      assert.deepEqual([r.body.total, r.body.operations, r.body.valueFormats], [0, [], []], query);
    }
    // Such a word beside an English one leaves the English one to find its operations.
    const mixed = await callTool(t, s.secret, 'search_api_docs', { query: 'créer contact' });
    assert.ok(
      mixed.body.operations.some((o: { operationId: string }) => o.operationId === 'createContact'),
      JSON.stringify(mixed.body.operations),
    );
    // Marks alone hold no word: the query is an empty one.
    const marks = await callTool(t, s.secret, 'search_api_docs', { query: '?! …' });
    assert.equal(marks.body.total, all.body.total);
  });
});
