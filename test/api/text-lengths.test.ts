// Length limits count characters (Unicode code points), not UTF-16 units, wherever a text is
// bounded (docs/errors.md §Lengths): 255 emoji fit a limit of 255 in a list's name, a filter value,
// a select option and the import's names and externalIds, as a route schema's maxLength counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { ImportFailed, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';

const E = '😀';

eachDialect('text lengths', (ctx) => {
  test('the API: a list name, a filter value and a select option count characters; one more is refused', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const made = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: E.repeat(255), $objectType: 'account' } });
    assert.equal(made.statusCode, 200, made.body);
    assert.equal(made.json().fields.$name.value, E.repeat(255));
    const renamed = await call(t, s.secret, 'POST', `/v1/lists/${made.json().id}`, { fields: { $name: `${E.repeat(254)}é` } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const long = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: E.repeat(256), $objectType: 'account' } });
    assert.equal(long.statusCode, 400);
    assert.deepEqual([long.json().error.code, long.json().error.param], ['invalid_value', 'fields.$name']);
    assert.match(long.json().error.message, /255 characters/);

    // 520 emoji: 1,040 UTF-16 units, within the 1,000 characters (and 2,196 bytes) of a filter value.
    const filtered = await call(t, s.secret, 'GET', `/v1/accounts?${encodeURIComponent('$name[equal]')}=${encodeURIComponent(E.repeat(520))}`);
    assert.equal(filtered.statusCode, 200, filtered.body);

    const label = E.repeat(200);
    const text = `{"object":"definition","externalId":"d","definition":"field","objectType":"account","key":"mood","label":"${label}","valueType":"SINGLE_SELECT","options":["${label}"]}`;
    await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds(), text });
    const acc = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', mood: label } });
    assert.equal(acc.statusCode, 200, acc.body);
  });

  test('the import: names, labels and externalIds count characters; one more is refused naming the field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const c = operatorCtx(t.deps.db.kysely, s.workspaceId);
    const lines = (n: number) =>
      [
        { object: 'user', externalId: `u${E.repeat(n - 1)}`, email: 'ann@acme.test', firstName: E.repeat(n) },
        { object: 'channel', externalId: 'c', provider: 'slack', name: E.repeat(n), visibility: 'public', members: [] },
        { object: 'list', externalId: 'l', name: E.repeat(n), objectType: 'account', members: [] },
        { object: 'definition', externalId: 'd', definition: 'type', slug: 'project', label: E.repeat(n) },
      ]
        .map((o) => JSON.stringify(o))
        .join('\n');
    const r = await runImport(c, { kinds: importKinds(), text: lines(255) });
    assert.deepEqual(r.counts, { user: 1, channel: 1, list: 1, definition: 1 });
    const lists = (await call(t, s.secret, 'GET', '/v1/lists')).json();
    assert.equal(lists.data[0].fields.$name.value, E.repeat(255));
    await assert.rejects(runImport(c, { kinds: importKinds(), text: lines(256) }), (err: unknown) => {
      assert.ok(err instanceof ImportFailed, String(err));
      assert.deepEqual(
        err.errors.map((e) => `${e.line} ${e.field}`),
        ['1 externalId', '2 name', '3 name', '4 label'],
      );
      return true;
    });
  });
});
