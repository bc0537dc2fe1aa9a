// The custom fields an account's run fills are those of the keys and types docs/enrichment.md §What
// a run fills names: `description` a TEXT or MARKDOWN field, `logo` a URL field. On both databases,
// a workspace whose fields of those keys have other types gets runs that do not target them, a
// request naming one is refused with 400 invalid_value at its place in `fields`, and an account
// with nothing else to fill is skipped (`no_targets`) instead of getting a run that fills nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import type { ValueType } from '../../src/lib/value-types.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

const SOCIAL = ['$linkedIn', '$twitter', '$facebook', '$instagram'];

eachDialect('enrichment targets by field type', (ctx) => {
  async function workspace(description: ValueType, logo: ValueType): Promise<Seeded> {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'description', label: 'Description', valueType: description });
    await addField(op, { objectType: 'account', key: 'logo', label: 'Logo', valueType: logo });
    return s;
  }
  async function account(s: Seeded, fields: Record<string, unknown> = {}): Promise<string> {
    const res = await call(ctx(), s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: ['https://acme.test'], ...fields } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().id;
  }
  const enrich = (s: Seeded, id: string, body: unknown) => call(ctx(), s.secret, 'POST', `/v1/enrichmentRun/accounts/${id}`, body);

  test('fields of those keys and types are targets, by default and by name', async () => {
    const s = await workspace('MARKDOWN', 'URL');
    const all = (await enrich(s, await account(s), {})).json();
    assert.deepEqual(all.enrichmentRun?.targetFields, [...SOCIAL, 'description', 'logo']);
    const named = (await enrich(s, await account(s), { fields: ['logo', 'description'] })).json();
    assert.deepEqual(named.enrichmentRun?.targetFields, ['logo', 'description']);
  });

  test('fields of those keys but of other types are never targets: left out, refused by name', async () => {
    const s = await workspace('NUMBER', 'TEXT');
    const all = (await enrich(s, await account(s), {})).json();
    assert.deepEqual([all.status, all.enrichmentRun?.targetFields], ['started', SOCIAL]);
    for (const [i, fields] of [
      [0, ['description']],
      [1, ['$linkedIn', 'logo']],
    ] as const) {
      const res = await enrich(s, await account(s), { fields });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_value', `fields[${i}]`]);
      // The message says which value types the field would need.
      assert.match(res.json().error.message, i === 0 ? /as a NUMBER field \(it is filled as TEXT or MARKDOWN\)/ : /as a TEXT field \(it is filled as URL\)/);
    }
    const full = Object.fromEntries(SOCIAL.map((k) => [k, 'acme']));
    const nothing = (await enrich(s, await account(s, full), {})).json();
    assert.deepEqual(nothing, { enrichmentRun: null, status: 'skipped', reason: 'no_targets' });
  });
});
