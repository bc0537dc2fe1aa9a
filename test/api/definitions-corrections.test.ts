// Definitions are operator data that can be corrected (docs/records.md §Correcting definitions), on
// both databases: `rolodex definition rename`, `definition option rename`, `definition archive |
// unarchive` (an archived field leaves definitions, responses, filters and writes; its values come
// back with unarchive), and a re-import with another label or description, each keeping the id.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

async function cli(t: TestApp, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), env, isTty: false };
  const code = await main(args, io);
  assert.equal(code, 0, `${args.join(' ')}: ${err.join('')}`);
  return JSON.parse(out.join(''));
}

eachDialect('definitions corrected', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }

  test('rename, option rename, archive and unarchive keep ids and values', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = ['--workspace', s.workspaceId, '--type', 'account'];
    const tier = await cli(t, 'definition', 'add', ...ws, '--key', 'tier', '--label', 'Tier', '--value-type', 'TEXT', '--json');
    const size = await cli(t, 'definition', 'add', ...ws, '--key', 'size', '--label', 'Size', '--value-type', 'SINGLE_SELECT', '--json');
    const small = await cli(t, 'definition', 'option', 'add', ...ws, '--field', 'size', '--label', 'Small', '--json');
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme', tier: 'gold', size: 'Small' } });

    assert.deepEqual(await cli(t, 'definition', 'rename', ...ws, '--key', 'tier', '--label', 'Level', '--description', 'Customer level', '--json'), {
      id: tier.id,
      label: 'Level',
    });
    await cli(t, 'definition', 'option', 'rename', ...ws, '--field', 'size', '--option', 'Small', '--label', 'S', '--json');
    const listed = await cli(t, 'definition', 'list', ...ws, '--json');
    const t2 = listed.fields.find((f: { key: string }) => f.key === 'tier');
    assert.deepEqual([t2.id, t2.label, t2.description], [tier.id, 'Level', 'Customer level']);
    const s2 = listed.fields.find((f: { key: string }) => f.key === 'size');
    assert.deepEqual([s2.id, s2.options], [size.id, [{ id: small.id, label: 'S', description: null }]]);
    assert.equal((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).fields.size.value, small.id);
    // The option named by its id instead of its label; filters then take the new label.
    await cli(t, 'definition', 'option', 'rename', ...ws, '--field', 'size', '--option', small.id, '--label', 'Small size', '--json');
    const relisted = (await cli(t, 'definition', 'list', ...ws, '--json')).fields.find((f: { key: string }) => f.key === 'size');
    assert.deepEqual(relisted.options, [{ id: small.id, label: 'Small size', description: null }]);
    assert.deepEqual(
      (await ok(s, 'GET', `/v1/accounts?size=${encodeURIComponent('small  SIZE')}`)).data.map((a: { id: string }) => a.id),
      [acc.id],
    );

    await cli(t, 'definition', 'archive', ...ws, '--key', 'tier', '--json');
    assert.equal((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).fields.tier, undefined);
    assert.equal(JSON.stringify(await ok(s, 'GET', '/v1/accounts/definitions')).includes('"tier"'), false);
    const write = await call(t, s.secret, 'POST', `/v1/accounts/${acc.id}`, { fields: { tier: 'x' } });
    assert.deepEqual([write.statusCode, write.json().error.code, write.json().error.param], [400, 'unknown_field', 'fields.tier']);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts?tier[equal]=gold')).statusCode, 400);
    // A write meanwhile re-indexes the record without the archived field.
    await ok(s, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: 'Acme Inc' } });

    await cli(t, 'definition', 'unarchive', ...ws, '--key', 'tier', '--json');
    assert.equal((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).fields.tier.value, 'gold');
    assert.equal((await ok(s, 'GET', '/v1/accounts?tier[equal]=gold')).totalCount, 1);
  });

  test("an archived field's label and options are corrected as a shown one's", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = ['--workspace', s.workspaceId, '--type', 'account'];
    await cli(t, 'definition', 'add', ...ws, '--key', 'size', '--label', 'Size', '--value-type', 'SINGLE_SELECT', '--json');
    const small = await cli(t, 'definition', 'option', 'add', ...ws, '--field', 'size', '--label', 'Small', '--json');
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme', size: 'Small' } });
    await cli(t, 'definition', 'archive', ...ws, '--key', 'size', '--json');
    // `definition list` shows it apart from the shown fields, where it was nowhere to be found
    // while `definition add --key size` was refused as "already defined".
    const keys = (defs: { fields: { key: string }[]; archived?: { key: string }[] }) => [
      defs.fields.some((f) => f.key === 'size'),
      defs.archived?.map((f) => f.key),
    ];
    assert.deepEqual(keys(await cli(t, 'definition', 'list', ...ws, '--json')), [false, ['size']]);
    const human = await rolodex(t, ['definition', 'list', ...ws]);
    assert.match(human.out, /\narchived fields:\n {2}size {2}SINGLE_SELECT {2}Size {2}\[Small\]$/);

    await cli(t, 'definition', 'rename', ...ws, '--key', 'size', '--label', 'Company size', '--json');
    const large = await cli(t, 'definition', 'option', 'add', ...ws, '--field', 'size', '--label', 'Large', '--json');
    assert.deepEqual(await cli(t, 'definition', 'option', 'rename', ...ws, '--field', 'size', '--option', 'Small', '--label', 'S', '--json'), {
      id: small.id,
      label: 'S',
    });
    // Its labels stay apart from each other while archived, as a shown field's.
    const clash = await rolodex(t, ['definition', 'option', 'rename', ...ws, '--field', 'size', '--option', large.id, '--label', 's']);
    assert.equal(clash.code, 1);
    assert.match(clash.err, /"S"/);

    // A type the workspace lacks is named as such, not as a type without the field.
    for (const verb of ['archive', 'unarchive']) {
      const nosuch = await rolodex(t, ['definition', verb, '--workspace', s.workspaceId, '--type', 'nosuch', '--key', 'size']);
      assert.deepEqual([nosuch.code, nosuch.err.trim()], [1, `rolodex definition: unknown object type "nosuch"`]);
      const nokey = await rolodex(t, ['definition', verb, ...ws, '--key', 'nokey']);
      assert.deepEqual([nokey.code, nokey.err.trim()], [1, `rolodex definition: account has no custom field "nokey"`]);
      // A relationship's key is named as one: only fields are archived.
      const rel = await rolodex(t, ['definition', verb, ...ws, '--key', '$contact']);
      assert.deepEqual(
        [rel.code, rel.err.trim()],
        [1, `rolodex definition: account has no custom field "$contact": it names a relationship, and only fields are archived`],
      );
    }

    await cli(t, 'definition', 'unarchive', ...ws, '--key', 'size', '--json');
    assert.deepEqual(keys(await cli(t, 'definition', 'list', ...ws, '--json')), [true, []]);
    const size = (await cli(t, 'definition', 'list', ...ws, '--json')).fields.find((f: { key: string }) => f.key === 'size');
    assert.deepEqual(
      [size.label, size.options],
      [
        'Company size',
        [
          { id: small.id, label: 'S', description: null },
          { id: large.id, label: 'Large', description: null },
        ],
      ],
    );
    assert.equal((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).fields.size.value, small.id);
  });

  test('a re-import with another label or description corrects it, keeping its id', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const line = (label: string, description: string | null) =>
      JSON.stringify({
        object: 'definition',
        externalId: 'd-tier',
        definition: 'field',
        objectType: 'account',
        key: 'tier',
        label,
        description,
        valueType: 'TEXT',
      });
    const file = join(t.tdb.dataDir, 'defs.ndjson');
    writeFileSync(file, `${line('Tier', null)}\n`);
    const first = await cli(t, 'import', '--workspace', s.workspaceId, file, '--json');
    writeFileSync(file, `${line('Level', 'Customer level')}\n`);
    const second = await cli(t, 'import', '--workspace', s.workspaceId, file, '--json');
    assert.deepEqual(second.ids, first.ids);
    const tier = (await cli(t, 'definition', 'list', '--workspace', s.workspaceId, '--type', 'account', '--json')).fields.find(
      (f: { key: string }) => f.key === 'tier',
    );
    assert.deepEqual([tier.label, tier.description], ['Level', 'Customer level']);
  });

  test('a re-import of an option with another description corrects it, keeping its id', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const hold = (label: string, description: string | null) => ({
      object: 'definition',
      externalId: `d-${label}`,
      definition: 'option',
      objectType: 'opportunity',
      field: '$stage',
      label,
      description,
    });
    const tier = (description: string) => ({
      object: 'definition',
      externalId: 'd-tier',
      definition: 'field',
      objectType: 'account',
      key: 'tier',
      label: 'Tier',
      valueType: 'SINGLE_SELECT',
      options: [{ label: 'Gold', description }, 'Silver'],
    });
    const file = join(t.tdb.dataDir, `options-${s.workspaceId}.ndjson`);
    const load = (...lines: object[]) => {
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
      return cli(t, 'import', '--workspace', s.workspaceId, file, '--json');
    };
    const first = await load(hold('On hold', 'Paused'), tier('Top'));
    const second = await load(hold('On hold', 'Waiting on the client'), tier('Pays the most'));
    assert.deepEqual(second.ids, first.ids);
    const stage = (await ok(s, 'GET', '/v1/opportunities/definitions')).fieldDefinitions.$stage.typeConfiguration.options.at(-1);
    assert.deepEqual(stage, { id: first.ids.definition['d-On hold'], label: 'On hold', description: 'Waiting on the client' });
    const gold = (await ok(s, 'GET', '/v1/accounts/definitions')).fieldDefinitions.tier.typeConfiguration.options;
    assert.deepEqual(
      gold.map((o: { label: string; description: string | null }) => [o.label, o.description]),
      [
        ['Gold', 'Pays the most'],
        ['Silver', null],
      ],
    );
    // A default option has no row, and no description to correct.
    writeFileSync(file, JSON.stringify(hold('Lead', 'First touch')));
    const lead = await rolodex(t, ['import', '--workspace', s.workspaceId, file]);
    assert.equal(lead.code, 1);
    assert.match(lead.err, /line 1: description: option opt_\w+ is a default option: it takes no description/);
  });
});
