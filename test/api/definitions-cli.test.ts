// Operators' definitions on both databases: `rolodex definition add|list|option add` and the import
// kind `definition`, which is idempotent (the same file twice changes nothing) and refuses a
// conflicting definition naming the line and the field, writing nothing.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

for (const dialect of testDialects()) {
  describe(`definitions cli [${dialect}]`, () => {
    let tdb: TestDb;
    let env: Record<string, string>;
    before(async () => {
      tdb = await createTestDb(dialect);
      env = { DATA_DIR: tdb.dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
    });
    after(async () => tdb.drop());

    async function rolodex(...args: string[]) {
      const stdout: string[] = [];
      const stderr: string[] = [];
      const io: Io = { out: (s) => stdout.push(s), err: (s) => stderr.push(s), env, isTty: false };
      const code = await main(args, io);
      return { code, out: stdout.join('\n'), err: stderr.join(''), json: () => JSON.parse(stdout.join('')) };
    }
    async function workspace() {
      const ws = await rolodex('workspace', 'create', '--name', 'Acme', '--json');
      assert.equal(ws.code, 0, ws.err);
      return ws.json().id as string;
    }
    const list = async (ws: string, type: string) => {
      const r = await rolodex('definition', 'list', '--workspace', ws, '--type', type, '--json');
      assert.equal(r.code, 0, r.err);
      return r.json();
    };
    const custom = (defs: any) => ({
      fields: defs.fields.filter((f: any) => !f.system),
      relationships: defs.relationships.filter((r: any) => !r.system),
      options: Object.fromEntries(defs.fields.filter((f: any) => f.options).map((f: any) => [f.key, f.options.map((o: any) => o.label)])),
    });

    test('definition add and option add create fields, relationships and options that list shows', async () => {
      const ws = await workspace();
      const tier = await rolodex(
        'definition',
        'add',
        '--workspace',
        ws,
        '--type',
        'account',
        '--key',
        'tier',
        '--label',
        'Tier',
        '--value-type',
        'SINGLE_SELECT',
        '--json',
      );
      assert.equal(tier.code, 0, tier.err);
      assert.match(tier.json().id, /^fld_/);
      assert.deepEqual([tier.json().key, tier.json().valueType, tier.json().options], ['tier', 'SINGLE_SELECT', []]);
      const arr = await rolodex(
        ...[
          'definition',
          'add',
          '--workspace',
          ws,
          '--type',
          'account',
          '--key',
          'arr',
          '--label',
          'ARR',
          '--value-type',
          'CURRENCY',
          '--currency',
          'EUR',
          '--unique',
        ],
      );
      assert.equal(arr.code, 0, arr.err);
      assert.match(arr.out, /^added field fld_\S+: account arr {2}CURRENCY {2}ARR {2}\(EUR, unique\)$/);
      const emails = await rolodex(
        ...[
          'definition',
          'add',
          '--workspace',
          ws,
          '--type',
          'contact',
          '--key',
          'emails',
          '--label',
          'Emails',
          '--value-type',
          'EMAIL',
          '--multiple-values',
          '--json',
        ],
      );
      assert.equal(emails.json().multipleValues, true);
      const handle = await rolodex(
        ...[
          'definition',
          'add',
          '--workspace',
          ws,
          '--type',
          'contact',
          '--key',
          'x',
          '--label',
          'X',
          '--value-type',
          'SOCIAL_HANDLE',
          '--handle-service',
          'TWITTER',
          '--json',
        ],
      );
      assert.equal(handle.json().handleService, 'TWITTER');
      const partner = await rolodex(
        ...[
          'definition',
          'add',
          '--workspace',
          ws,
          '--type',
          'contact',
          '--key',
          'partner',
          '--label',
          'Partner',
          '--relationship',
          '--cardinality',
          'has_one',
          '--target',
          'account',
          '--json',
        ],
      );
      assert.equal(partner.code, 0, partner.err);
      assert.deepEqual(
        [partner.json().key, partner.json().cardinality, partner.json().objectType, partner.json().system],
        ['partner', 'has_one', 'account', false],
      );
      const gold = await rolodex('definition', 'option', 'add', '--workspace', ws, '--type', 'account', '--field', 'tier', '--label', 'Gold', '--json');
      assert.equal(gold.code, 0, gold.err);
      assert.match(gold.json().id, /^opt_/);
      const hold = await rolodex(
        'definition',
        'option',
        'add',
        '--workspace',
        ws,
        '--type',
        'opportunity',
        '--field',
        '$stage',
        '--label',
        'On hold',
        '--description',
        'Paused',
      );
      assert.equal(hold.code, 0, hold.err);

      const account = custom(await list(ws, 'account'));
      assert.deepEqual(
        account.fields.map((f: any) => [f.key, f.valueType, f.currency, f.unique]),
        [
          ['tier', 'SINGLE_SELECT', null, false],
          ['arr', 'CURRENCY', 'EUR', true],
        ],
      );
      assert.deepEqual(account.options.tier, ['Gold']);
      assert.deepEqual(
        custom(await list(ws, 'contact')).relationships.map((r: any) => r.key),
        ['partner'],
      );
      const stage = (await list(ws, 'opportunity')).fields.find((f: any) => f.key === '$stage');
      assert.deepEqual(stage.options.at(-1), { id: stage.options.at(-1).id, label: 'On hold', description: 'Paused' });
      const human = await rolodex('definition', 'list', '--workspace', ws, '--type', 'account');
      assert.equal(human.code, 0, human.err);
      assert.match(human.out, /^ {2}tier {2}SINGLE_SELECT {2}Tier {2}\[Gold\]$/m);
      assert.match(human.out, /^relationships:\n {2}\$owner {2}has_one member {2}Owner$/m);
    });

    test('refusals: taken keys, wrong values and unknown names, with the documented exit codes', async () => {
      const ws = await workspace();
      const add = (...rest: string[]) => rolodex('definition', 'add', '--workspace', ws, '--type', 'account', ...rest);
      assert.equal((await add('--key', 'tier', '--label', 'Tier', '--value-type', 'TEXT')).code, 0);
      const taken = await add('--key', 'tier', '--label', 'Tier', '--value-type', 'TEXT');
      assert.deepEqual([taken.code, taken.err], [1, 'rolodex definition: "tier" is already defined']);
      const system = await add('--key', '$name', '--label', 'Name', '--value-type', 'TEXT');
      assert.equal(system.code, 1);
      assert.equal((await add('--key', 'n', '--label', 'N', '--value-type', 'INTEGER')).code, 2);
      assert.equal((await add('--key', 'n', '--label', 'N', '--value-type', 'TEXT', '--multiple-values')).code, 1);
      assert.equal((await add('--key', 'n', '--label', 'N', '--value-type', 'TEXT', '--currency', 'EUR')).code, 1);
      // A unique value is compared whole through one row of the value index, which these have not.
      for (const valueType of ['ADDRESS', 'FULL_NAME']) {
        const unique = await add('--key', 'n', '--label', 'N', '--value-type', valueType, '--unique');
        assert.deepEqual([unique.code, unique.err], [1, 'rolodex definition: ADDRESS and FULL_NAME fields cannot be unique'], valueType);
      }
      assert.equal((await add('--key', 'n', '--label', 'N', '--relationship', '--cardinality', 'many', '--target', 'contact')).code, 2);
      const target = await add('--key', 'n', '--label', 'N', '--relationship', '--cardinality', 'has_one', '--target', 'widget');
      assert.deepEqual([target.code, target.err], [1, 'rolodex definition: unknown object type "widget"']);
      const type = await rolodex('definition', 'list', '--workspace', ws, '--type', 'widget');
      assert.deepEqual([type.code, type.err], [1, 'rolodex definition: unknown object type "widget"']);
      const noWs = await rolodex('definition', 'list', '--workspace', 'ws_nope', '--type', 'account');
      assert.equal(noWs.code, 1);
      const option = await rolodex('definition', 'option', 'add', '--workspace', ws, '--type', 'account', '--field', 'tier', '--label', 'Gold');
      assert.deepEqual([option.code, option.err], [1, 'rolodex definition: "tier" is not a select field of account']);
      assert.equal((await rolodex('definition', 'option', 'list', '--workspace', ws)).code, 2);
      assert.equal((await rolodex('definition', 'remove', '--workspace', ws, '--type', 'account')).code, 2);
      assert.deepEqual(
        custom(await list(ws, 'account')).fields.map((f: any) => f.key),
        ['tier'],
      );
    });

    test('labels and descriptions are bounded as the import reads them back, whoever writes them', async () => {
      const ws = await workspace();
      const at = ['--workspace', ws, '--type', 'account'];
      const long = 'x'.repeat(256);
      const longer = 'y'.repeat(10_001);
      const refused = async (args: string[], message: string) => {
        const r = await rolodex('definition', ...args);
        assert.deepEqual([r.code, r.err], [1, `rolodex definition: ${message}`], args.join(' '));
      };
      const label = 'must be 1 to 255 characters, not only white space';
      await refused(['add', ...at, '--key', 'a', '--label', long, '--value-type', 'TEXT'], label);
      await refused(['add', ...at, '--key', 'a', '--label', 'A', '--value-type', 'TEXT', '--description', longer], 'must be at most 10,000 characters');
      await refused(['add', ...at, '--key', 'r', '--label', long, '--relationship', '--cardinality', 'has_one', '--target', 'contact'], label);
      await refused(['option', 'add', ...at, '--field', '$headcount', '--label', 'Big', '--description', longer], 'must be at most 10,000 characters');
      await refused(['type', 'add', '--workspace', ws, '--slug', 'project', '--label', long], label);
      assert.equal((await rolodex('definition', 'add', ...at, '--key', 'a', '--label', 'A', '--value-type', 'TEXT')).code, 0);
      await refused(['rename', ...at, '--key', 'a', '--label', 'B', '--description', longer], 'must be at most 10,000 characters');
      // What is there is exported and imported again as it is.
      const file = join(tdb.dataDir, `bounded-${ws}.ndjson`);
      assert.equal((await rolodex('export', '--workspace', ws, file)).code, 0);
      const other = await workspace();
      const imported = await rolodex('import', '--workspace', other, file);
      assert.equal(imported.code, 0, imported.err);
    });

    const importFile = (name: string, objects: object[]) => {
      const file = join(tdb.dataDir, name);
      writeFileSync(file, objects.map((o) => JSON.stringify(o)).join('\n'));
      return file;
    };
    const DEFINITIONS = [
      // An option may come before the field it extends.
      { object: 'definition', externalId: 'd-platinum', definition: 'option', objectType: 'account', field: 'tier', label: 'Platinum' },
      {
        object: 'definition',
        externalId: 'd-tier',
        definition: 'field',
        objectType: 'account',
        key: 'tier',
        label: 'Tier',
        valueType: 'SINGLE_SELECT',
        options: ['Gold', 'Silver'],
      },
      {
        object: 'definition',
        externalId: 'd-arr',
        definition: 'field',
        objectType: 'account',
        key: 'arr',
        label: 'ARR',
        valueType: 'CURRENCY',
        currency: 'EUR',
        unique: true,
      },
      {
        object: 'definition',
        externalId: 'd-partner',
        definition: 'relationship',
        objectType: 'contact',
        key: 'partner',
        label: 'Partner',
        cardinality: 'has_many',
        targetType: 'account',
      },
      { object: 'definition', externalId: 'd-hold', definition: 'option', objectType: 'opportunity', field: '$stage', label: 'On hold', description: 'Paused' },
    ];

    test('the import kind definition creates what is missing and changes nothing the second time', async () => {
      const ws = await workspace();
      const file = importFile('definitions.ndjson', DEFINITIONS);
      const first = await rolodex('import', '--workspace', ws, file, '--json');
      assert.equal(first.code, 0, first.err);
      assert.deepEqual(first.json().counts, { definition: 5 });
      assert.match(first.json().ids.definition['d-tier'], /^fld_/);
      assert.match(first.json().ids.definition['d-partner'], /^rld_/);
      assert.match(first.json().ids.definition['d-hold'], /^opt_/);
      const snapshot = async () => ({ account: await list(ws, 'account'), contact: await list(ws, 'contact'), opportunity: await list(ws, 'opportunity') });
      const once = await snapshot();
      assert.deepEqual(custom(once.account).options.tier, ['Gold', 'Silver', 'Platinum']);
      assert.deepEqual(
        custom(once.account).fields.map((f: any) => [f.key, f.label, f.valueType, f.currency, f.unique]),
        [
          ['tier', 'Tier', 'SINGLE_SELECT', null, false],
          ['arr', 'ARR', 'CURRENCY', 'EUR', true],
        ],
      );
      assert.deepEqual(
        custom(once.contact).relationships.map((r: any) => [r.key, r.label, r.cardinality, r.objectType]),
        [['partner', 'Partner', 'has_many', 'account']],
      );
      assert.equal(custom(once.opportunity).options.$stage.at(-1), 'On hold');

      const again = await rolodex('import', '--workspace', ws, file, '--json');
      assert.equal(again.code, 0, again.err);
      assert.deepEqual(again.json().ids, first.json().ids);
      assert.deepEqual(await snapshot(), once);

      // Options of a field only grow: a known field listing a new option adds it.
      const more = importFile('more.ndjson', [{ ...DEFINITIONS[1], options: ['Bronze'] }]);
      assert.equal((await rolodex('import', '--workspace', ws, more)).code, 0);
      assert.deepEqual(custom(await list(ws, 'account')).options.tier, ['Gold', 'Silver', 'Platinum', 'Bronze']);
    });

    test('a currency of ISO 4217 that ICU has no data for (a fund, a metal) is taken; a typo is not', async () => {
      const ws = await workspace();
      const add = (key: string, currency: string) =>
        rolodex('definition', 'add', '--workspace', ws, '--type', 'account', '--key', key, '--label', key, '--value-type', 'CURRENCY', '--currency', currency);
      for (const [key, currency] of [
        ['uf', 'CLF'],
        ['gold', 'XAU'],
        ['bolivar', 'VED'],
      ]) {
        const r = await add(key as string, currency as string);
        assert.equal(r.code, 0, `${currency}: ${r.err}`);
      }
      const typo = await add('typo', 'ZZZ');
      assert.equal(typo.code, 2, typo.err);
      assert.ok(typo.err.startsWith('rolodex definition: --currency must be a three-letter ISO 4217 code such as EUR (got "ZZZ")\n'), typo.err);
      const line = { object: 'definition', externalId: 'd-mxv', definition: 'field', objectType: 'account', key: 'mxv', label: 'MXV', valueType: 'CURRENCY' };
      const imported = await rolodex('import', '--workspace', ws, importFile('funds.ndjson', [{ ...line, currency: 'MXV' }]));
      assert.equal(imported.code, 0, imported.err);
      const refused = await rolodex('import', '--workspace', ws, importFile('typo.ndjson', [{ ...line, externalId: 'd-zzz', key: 'zzz', currency: 'ZZZ' }]));
      assert.equal(refused.code, 1, refused.err);
      assert.deepEqual(
        custom(await list(ws, 'account')).fields.map((f: any) => [f.key, f.currency]),
        [
          ['uf', 'CLF'],
          ['gold', 'XAU'],
          ['bolivar', 'VED'],
          ['mxv', 'MXV'],
        ],
      );
    });

    test('a conflicting definition is refused, naming the line and the field, and nothing is written', async () => {
      const ws = await workspace();
      assert.equal((await rolodex('import', '--workspace', ws, importFile('base.ndjson', DEFINITIONS))).code, 0);
      const before = await list(ws, 'account');
      const cases: Array<[object, string]> = [
        [{ ...DEFINITIONS[2], currency: 'USD' }, 'line 2: currency: field "arr" of account exists with currency "EUR", not "USD"'],
        [
          { ...DEFINITIONS[3], cardinality: 'has_one' },
          'line 2: cardinality: relationship "partner" of contact exists with cardinality "has_many", not "has_one"',
        ],
        [
          { object: 'definition', externalId: 'd-name', definition: 'field', objectType: 'account', key: '$name', label: 'Name', valueType: 'TEXT' },
          'line 2: key: "$name" is a system field',
        ],
        [
          { object: 'definition', externalId: 'd-w', definition: 'field', objectType: 'widget', key: 'w', label: 'W', valueType: 'TEXT' },
          'line 2: objectType: unknown object type "widget"',
        ],
        [
          { object: 'definition', externalId: 'd-v', definition: 'field', objectType: 'account', key: 'v', label: 'V', valueType: 'INTEGER' },
          'line 2: valueType: must be one of',
        ],
        [
          { object: 'definition', externalId: 'd-o', definition: 'option', objectType: 'account', field: 'arr', label: 'A' },
          'line 2: field: "arr" is not a select field of account',
        ],
      ];
      for (const [conflict, message] of cases) {
        // A new field on line 1 must not survive the refused line 2.
        const extra = {
          object: 'definition',
          externalId: 'd-new',
          definition: 'field',
          objectType: 'account',
          key: 'fresh',
          label: 'Fresh',
          valueType: 'TEXT',
        };
        const r = await rolodex('import', '--workspace', ws, importFile('conflict.ndjson', [extra, conflict]));
        assert.equal(r.code, 1, JSON.stringify(conflict));
        assert.ok(r.err.includes(message), `${r.err} should include ${message}`);
        assert.deepEqual(await list(ws, 'account'), before);
      }
    });
  });
}
