// `rolodex export` of a workspace with a custom field of every value type (single and
// multi-valued, unique, with descriptions, currencies, services, countries, select options with
// descriptions, archived ones), custom relationships both ways and a custom object type, imported
// into an empty workspace: the definitions and the records read the same through the API, ids and
// server times aside (docs/import.md §Export).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField, addOption, addRelationship } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

type Json = Record<string, any>;

/** A response with ids, server times and the key's own user left out, option ids read as labels. */
function stripped(v: unknown, labels: Map<string, string>): unknown {
  if (Array.isArray(v)) return v.map((x) => stripped(x, labels));
  if (typeof v === 'string') return labels.get(v) ?? v;
  if (!v || typeof v !== 'object') return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) if (!['id', 'createdAt', 'updatedAt', 'workspaceId'].includes(k)) out[k] = stripped(x, labels);
  return out;
}

async function definitions(t: TestApp, s: Seeded, plural: string): Promise<{ body: Json; labels: Map<string, string> }> {
  const res = await call(t, s.secret, 'GET', `/v1/${plural}/definitions`);
  assert.equal(res.statusCode, 200, res.body);
  const labels = new Map<string, string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Json;
      if (typeof o.id === 'string' && o.id.startsWith('opt_') && typeof o.label === 'string') labels.set(o.id, o.label);
      Object.values(o).forEach(walk);
    }
  };
  walk(res.json());
  return { body: res.json(), labels };
}

const TYPES: Array<[string, Json]> = [
  ['text', { valueType: 'TEXT', description: 'Plain text' }],
  ['links', { valueType: 'URL', multipleValues: true }],
  ['md', { valueType: 'MARKDOWN' }],
  ['mail', { valueType: 'EMAIL', unique: true }],
  ['link', { valueType: 'URL' }],
  ['phone', { valueType: 'TELEPHONE', defaultCountry: 'DE' }],
  ['phones', { valueType: 'TELEPHONE', multipleValues: true }],
  ['handle', { valueType: 'SOCIAL_HANDLE', handleService: 'LINKEDIN' }],
  ['nick', { valueType: 'SOCIAL_HANDLE' }],
  ['one', { valueType: 'SINGLE_SELECT' }],
  ['many', { valueType: 'MULTI_SELECT' }],
  ['num', { valueType: 'NUMBER', unique: true }],
  ['money', { valueType: 'CURRENCY', currency: 'EUR' }],
  ['flag', { valueType: 'CHECKBOX' }],
  ['when', { valueType: 'DATETIME' }],
  ['where', { valueType: 'ADDRESS' }],
  ['who', { valueType: 'FULL_NAME' }],
];

eachDialect('rolodex export: every value type', (ctx) => {
  test('definitions and records of every value type come back alike', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, a.workspaceId);
    assert.equal((await rolodex(t, ['workspace', 'set', '--workspace', a.workspaceId, '--default-country', 'US'])).code, 0);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    for (const [key, def] of TYPES) await addField(op, { objectType: 'account', key, label: key.toUpperCase(), ...def } as never);
    await addField(op, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
    for (const [field, label, description] of [
      ['one', 'Gold', 'the best'],
      ['one', 'Silver', null],
      ['many', 'North', null],
      ['many', 'South', 'below'],
      ['$stage', 'On hold', 'paused'],
    ] as const)
      await addOption(op, { objectType: field === '$stage' ? 'opportunity' : 'account', fieldKey: field, label, description });
    await addOption(op, { objectType: 'account', fieldKey: '$industry', label: 'Robotics' });
    await addRelationship(op, {
      objectType: 'project',
      key: 'client',
      label: 'Client',
      cardinality: 'has_one',
      targetType: 'account',
      description: 'who pays',
    });
    await addRelationship(op, { objectType: 'account', key: 'projects', label: 'Projects', cardinality: 'has_many', targetType: 'project' });
    const ok = async (method: 'POST' | 'GET', url: string, body?: unknown): Promise<Json> => {
      const r = await call(t, a.secret, method, url, body);
      assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
      return r.json();
    };
    const acme = await ok('POST', '/v1/accounts', {
      fields: {
        $name: 'Acme',
        $industry: ['Robotics'],
        $linkedIn: 'acme-inc',
        text: 'hello  world ',
        links: ['https://b.test', 'https://a.test'],
        md: '# Title\n\n* item',
        mail: 'Ann@Acme.test',
        link: 'https://acme.test/a?b=c#d',
        phone: '030 1234567',
        phones: ['(202) 555-0123', '+44 20 7946 0958 ext. 12'],
        handle: 'jürgen',
        nick: 'ann_lee',
        one: 'Gold',
        many: ['South', 'North'],
        num: 1.5,
        money: -12.25,
        flag: false,
        when: '2026-03-01T09:30:00+01:00',
        where: { street: 'Main 1', city: 'Berlin', country: 'de', latitude: 52.5, longitude: 13.4 },
        who: { firstName: 'Ann', lastName: 'Lee' },
      },
    });
    const project = await ok('POST', '/v1/objects/project/values', { fields: { name: 'Apollo' }, relationships: { client: acme.id } });
    await ok('POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'On hold' }, relationships: { $account: acme.id } });
    assert.equal((await rolodex(t, ['definition', 'archive', '--workspace', a.workspaceId, '--type', 'account', '--key', 'nick'])).code, 0);

    const file = join(t.tdb.dataDir, 'every.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, file]);
    assert.equal(ex.code, 0, ex.err);
    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file, '--json']);
    assert.equal(im.code, 0, im.err);
    const ids = JSON.parse(im.out).ids as Record<string, Record<string, string>>;

    for (const plural of ['accounts', 'contacts', 'opportunities', 'notes', 'tasks', 'objects/project']) {
      const [da, db] = [await definitions(t, a, plural), await definitions(t, b, plural)];
      // In the same order too: definitions keep their positions.
      assert.equal(JSON.stringify(stripped(db.body, db.labels)), JSON.stringify(stripped(da.body, da.labels)), `${plural} definitions`);
    }
    const [la, lb] = [(await definitions(t, a, 'accounts')).labels, (await definitions(t, b, 'accounts')).labels];
    const get = async (s: Seeded, url: string) => (await call(t, s.secret, 'GET', url)).json();
    const copyAcme = await get(b, `/v1/accounts/${ids.account![acme.id]}`);
    const origAcme = await get(a, `/v1/accounts/${acme.id}`);
    assert.deepEqual(stripped(copyAcme.fields, lb), stripped(origAcme.fields, la));
    const counts = (r: Json) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, (v as { values: string[] }).values.length]));
    assert.deepEqual(counts(copyAcme.relationships), counts(origAcme.relationships));
    const copyProject = await get(b, `/v1/objects/project/values/${Object.values(ids).find((m) => m[project.id])?.[project.id]}`);
    assert.deepEqual(copyProject.relationships.client.values, [copyAcme.id]);
    // The copy takes a national number as the original does (the workspace's default country).
    const again = await call(t, b.secret, 'POST', '/v1/accounts', { fields: { $name: 'B', phones: ['(202) 555-0199'] } });
    assert.equal(again.statusCode, 200, again.body);
  });
});
