// Re-importing definitions (docs/import.md §definition), on both databases: a line without
// `description` keeps the stored one and `null` clears it, for fields, relationships and options;
// option labels of one field never differ only in case or white space, whether added by a field
// line, an option line, `rolodex definition option add` or `option rename`; labels are stored
// without outer white space (docs/records.md §Definitions).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { insertOption } from '../../src/definitions/repository.ts';

type Line = Record<string, unknown>;

const def = (externalId: string, body: Line, description?: string | null): Line => ({
  object: 'definition',
  externalId,
  ...body,
  ...(description !== undefined ? { description } : {}),
});
const tier = (label: string, options: unknown[], description?: string | null) =>
  def('d-tier', { definition: 'field', objectType: 'account', key: 'tier', label, valueType: 'SINGLE_SELECT', options }, description);
const partner = (description?: string | null) =>
  def(
    'd-partner',
    { definition: 'relationship', objectType: 'contact', key: 'partner', label: 'Partner', cardinality: 'has_one', targetType: 'account' },
    description,
  );
const hold = (label: string, description?: string | null) =>
  def(`d-${label}`, { definition: 'option', objectType: 'opportunity', field: '$stage', label }, description);

eachDialect('definitions re-imported', (ctx) => {
  async function load(t: TestApp, s: Seeded, ...lines: Line[]) {
    const file = join(t.tdb.dataDir, `defs-${s.workspaceId}.ndjson`);
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    return rolodex(t, ['import', '--workspace', s.workspaceId, file, '--json']);
  }

  async function described(t: TestApp, s: Seeded) {
    const get = async (url: string) => (await call(t, s.secret, 'GET', url)).json();
    const account = (await get('/v1/accounts/definitions')).fieldDefinitions.tier;
    const contact = (await get('/v1/contacts/definitions')).relationshipDefinitions.partner;
    const stage = (await get('/v1/opportunities/definitions')).fieldDefinitions.$stage;
    return {
      tier: [account.label, account.description],
      gold: account.typeConfiguration.options[0].description,
      partner: contact.description,
      hold: stage.typeConfiguration.options.at(-1).description,
    };
  }

  test('a line without description keeps the stored one; null clears it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const first = await load(t, s, tier('Tier', [{ label: 'Gold', description: 'Top' }], 'Customer tier'), partner('Main partner'), hold('On hold', 'Paused'));
    assert.equal(first.code, 0, first.err);
    const kept = { tier: ['Tier', 'Customer tier'], gold: 'Top', partner: 'Main partner', hold: 'Paused' };
    assert.deepEqual(await described(t, s), kept);

    // Without `description`, and with another label: the label changes, every description stays.
    const again = await load(t, s, tier('Level', ['Gold']), partner(), hold('On hold'));
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(JSON.parse(again.out).ids, JSON.parse(first.out).ids);
    assert.deepEqual(await described(t, s), { ...kept, tier: ['Level', 'Customer tier'] });

    const cleared = await load(t, s, tier('Level', [{ label: 'Gold', description: null }], null), partner(null), hold('On hold', null));
    assert.equal(cleared.code, 0, cleared.err);
    assert.deepEqual(await described(t, s), { tier: ['Level', null], gold: null, partner: null, hold: null });
  });

  test('option labels of one field differ by more than case and white space', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const refused = async (lines: Line[], expected: RegExp) => {
      const r = await load(t, s, ...lines);
      assert.equal(r.code, 1, `${JSON.stringify(lines)} was imported`);
      assert.match(r.err, expected);
    };
    await refused([tier('Tier', ['Gold', 'Silver', 'gold'])], /line 1: options\[2\]: "gold" differs from option "Gold" only in case or white space/);
    assert.equal((await load(t, s, tier('Tier', ['Gold', 'Silver']))).code, 0);
    // The same label again changes nothing; one equal to it but for case or spaces is refused.
    assert.equal((await load(t, s, tier('Tier', ['Gold']), def('d-o', { definition: 'option', objectType: 'account', field: 'tier', label: 'Gold' }))).code, 0);
    await refused([tier('Tier', ['Silver', 'GOLD'])], /line 1: options\[1\]: "GOLD" differs from option "Gold"/);
    await refused(
      [def('d-o', { definition: 'option', objectType: 'account', field: 'tier', label: ' gold ' })],
      /line 1: label: "gold" differs from option "Gold"/,
    );
    await refused([hold('closed  WON')], /line 1: label: "closed {2}WON" differs from option "Closed won"/);

    const ws = ['--workspace', s.workspaceId, '--type', 'account', '--field', 'tier'];
    const add = await rolodex(t, ['definition', 'option', 'add', ...ws, '--label', 'SILVER']);
    assert.deepEqual([add.code, /"SILVER" differs from option "Silver"/.test(add.err)], [1, true], add.err);
    const rename = await rolodex(t, ['definition', 'option', 'rename', ...ws, '--option', 'Silver', '--label', 'gold']);
    assert.deepEqual([rename.code, /"gold" differs from option "Gold"/.test(rename.err)], [1, true], rename.err);
    // An option may change the case of its own label.
    assert.equal((await rolodex(t, ['definition', 'option', 'rename', ...ws, '--option', 'Gold', '--label', 'GOLD'])).code, 0);
    const options = (await call(t, s.secret, 'GET', '/v1/accounts/definitions')).json().fieldDefinitions.tier.typeConfiguration.options;
    assert.deepEqual(
      options.map((o: { label: string }) => o.label),
      ['GOLD', 'Silver'],
    );
  });

  test('labels given with outer white space are stored without it, and values written with the shown label match', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const lines = [
      tier(' Tier ', [' Green ', { label: '  Red' }]),
      def('d-blue', { definition: 'option', objectType: 'account', field: 'tier', label: 'Blue  ' }),
    ];
    const first = await load(t, s, ...lines);
    assert.equal(first.code, 0, first.err);
    const ws = ['--workspace', s.workspaceId, '--type', 'account', '--field', 'tier'];
    const add = await rolodex(t, ['definition', 'option', 'add', ...ws, '--label', ' Amber ']);
    assert.equal(add.code, 0, add.err);
    const tierDef = (await call(t, s.secret, 'GET', '/v1/accounts/definitions')).json().fieldDefinitions.tier;
    assert.deepEqual([tierDef.label, tierDef.typeConfiguration.options.map((o: { label: string }) => o.label)], ['Tier', ['Green', 'Red', 'Blue', 'Amber']]);
    for (const label of ['Green', 'Amber']) {
      const made = await call(t, s.secret, 'POST', '/v1/accounts', {
        fields: { $name: `Acme ${label}`, tier: label },
      });
      assert.equal(made.statusCode, 200, made.body);
    }
    // The same file again changes nothing.
    const again = await load(t, s, ...lines);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(JSON.parse(again.out).ids, JSON.parse(first.out).ids);
  });

  test('an option stored with outer white space before labels were trimmed is still the same option on re-import', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    assert.equal((await load(t, s, tier('Tier', ['Gold']))).code, 0);
    // As a release that kept outer white space stored it.
    await insertOption(t.deps.db.kysely, {
      id: 'opt_teal',
      workspace_id: s.workspaceId,
      object_type: 'account',
      field_key: 'tier',
      label: ' Teal ',
      description: null,
    });
    const again = await load(
      t,
      s,
      tier('Tier', ['Gold', ' Teal ']),
      def('d-teal', { definition: 'option', objectType: 'account', field: 'tier', label: 'Teal' }),
    );
    assert.equal(again.code, 0, again.err);
    const options = (await call(t, s.secret, 'GET', '/v1/accounts/definitions')).json().fieldDefinitions.tier.typeConfiguration.options;
    assert.deepEqual(
      options.map((o: { id: string }) => o.id).filter((id: string) => id === 'opt_teal'),
      ['opt_teal'],
    );
    assert.equal(options.length, 2);
  });
});
