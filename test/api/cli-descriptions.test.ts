// An empty `--description ''` is no description (docs/cli.md): `definition rename` clears the one a
// field or relationship has (without the option it keeps it), and `definition add`, `option add`
// and `webhook add` store none, answered `null` as for a definition made without one, never "".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

async function cli(t: TestApp, ...args: string[]): Promise<unknown> {
  const r = await rolodex(t, [...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
  return JSON.parse(r.out);
}

eachDialect('CLI descriptions', (ctx) => {
  test('definition rename --description "" clears the description, which the API then answers as null', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const at = ['--workspace', s.workspaceId, '--type', 'account'];
    await cli(t, 'definition', 'add', ...at, '--key', 'tier', '--label', 'Tier', '--value-type', 'TEXT', '--description', 'Why it matters');
    await cli(
      t,
      'definition',
      'add',
      ...at,
      '--key',
      'partner',
      '--label',
      'Partner',
      '--relationship',
      '--cardinality',
      'has_one',
      '--target',
      'contact',
      '--description',
      'Who',
    );
    const described = async () => {
      const r = await call(t, s.secret, 'GET', '/v1/accounts/definitions');
      assert.equal(r.statusCode, 200, r.body);
      return [r.json().fieldDefinitions.tier.description, r.json().relationshipDefinitions.partner.description];
    };
    assert.deepEqual(await described(), ['Why it matters', 'Who']);

    // Without the option a rename keeps the description; empty, it clears it.
    await cli(t, 'definition', 'rename', ...at, '--key', 'tier', '--label', 'Tier level');
    assert.deepEqual(await described(), ['Why it matters', 'Who']);
    await cli(t, 'definition', 'rename', ...at, '--key', 'tier', '--label', 'Tier level', '--description', '');
    await cli(t, 'definition', 'rename', ...at, '--key', 'partner', '--label', 'Partner', '--description', '');
    assert.deepEqual(await described(), [null, null]);
    const listed = (await cli(t, 'definition', 'list', ...at)) as { fields: { key: string; description: unknown }[] };
    assert.equal(listed.fields.find((f) => f.key === 'tier')?.description, null);
  });

  test('an empty --description on add stores none: a field, an option and a webhook answer null', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const at = ['--workspace', s.workspaceId, '--type', 'account'];
    await cli(t, 'definition', 'add', ...at, '--key', 'tier', '--label', 'Tier', '--value-type', 'SINGLE_SELECT', '--description', '');
    await cli(t, 'definition', 'option', 'add', ...at, '--field', 'tier', '--label', 'Gold', '--description', '');
    const r = await call(t, s.secret, 'GET', '/v1/accounts/definitions');
    const tier = r.json().fieldDefinitions.tier;
    assert.equal(tier.description, null);
    assert.equal(tier.typeConfiguration.options.find((o: { label: string }) => o.label === 'Gold').description, null);

    await cli(t, 'webhook', 'add', '--workspace', s.workspaceId, '--url', 'https://hooks.example.com/in', '--all', '--description', '');
    const hooks = (await cli(t, 'webhook', 'list', '--workspace', s.workspaceId)) as { description: unknown }[];
    assert.deepEqual(
      hooks.map((h) => h.description),
      [null],
    );
  });
});
