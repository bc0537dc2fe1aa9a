// The import format's definition lines and custom records (docs/import.md §definition, §record),
// on both databases: a file written as the format says (`"definition": "objectType"`,
// `targetObjectType`, an upper-case cardinality, no externalId on definitions, `"object": slug`)
// imports, the spellings earlier releases wrote stay accepted, and `rolodex export` writes the
// format's own.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

function file(t: TestApp, name: string, lines: readonly object[]): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n'));
  return path;
}

const decided = [
  { object: 'definition', definition: 'objectType', slug: 'project', label: 'Project' },
  { object: 'definition', definition: 'field', objectType: 'project', key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT', options: [{ label: 'Gold' }] },
  {
    object: 'definition',
    definition: 'relationship',
    objectType: 'account',
    key: 'partner',
    label: 'Partner',
    cardinality: 'HAS_ONE',
    targetObjectType: 'contact',
  },
];

eachDialect('import: definition lines as the format spells them', (ctx) => {
  test('a type, a field of it and a relationship, spelled as the format says, import and work', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'decided.ndjson', decided)]);
    assert.equal(r.code, 0, r.err);
    const defs = await call(t, s.secret, 'GET', '/v1/accounts/definitions');
    assert.equal(defs.statusCode, 200, defs.body);
    const partner = defs.json().relationshipDefinitions.partner as { cardinality: string; objectType: string };
    assert.deepEqual([partner.cardinality, partner.objectType], ['HAS_ONE', 'contact']);
    const p = await call(t, s.secret, 'POST', '/v1/objects/project/values', { fields: { tier: 'Gold' } });
    assert.equal(p.statusCode, 200, p.body);
    // The same lines again change nothing: the spelling is not a difference.
    const again = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'again.ndjson', decided)]);
    assert.equal(again.code, 0, again.err);
  });

  test('the spellings of earlier releases import to the same definitions', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const earlier = [
      { object: 'definition', definition: 'type', slug: 'project', label: 'Project' },
      {
        object: 'definition',
        definition: 'relationship',
        objectType: 'account',
        key: 'partner',
        label: 'Partner',
        cardinality: 'has_one',
        targetType: 'contact',
      },
    ];
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'earlier.ndjson', earlier)]);
    assert.equal(r.code, 0, r.err);
    const both = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'decided.ndjson', decided)]);
    assert.equal(both.code, 0, both.err);
  });

  test('a line giving both spellings of the target is refused with its line and member', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const line = { ...decided[2], targetType: 'contact' };
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'both.ndjson', [line])]);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /line 1: targetType: give "targetObjectType" or "targetType", not both/);
  });

  test('rolodex export writes the format spelling, and its file imports into an empty workspace', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    assert.equal((await rolodex(t, ['import', '--workspace', a.workspaceId, file(t, 'in.ndjson', decided)])).code, 0);
    const out = join(t.tdb.dataDir, 'out.ndjson');
    const e = await rolodex(t, ['export', '--workspace', a.workspaceId, out]);
    assert.equal(e.code, 0, e.err);
    const lines = readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const type = lines.find((l) => l.slug === 'project');
    const rel = lines.find((l) => l.key === 'partner');
    assert.equal(type?.definition, 'objectType');
    assert.deepEqual([rel?.cardinality, rel?.targetObjectType, rel?.targetType], ['HAS_ONE', 'contact', undefined]);
    const b = await seedWorkspace(t);
    const i = await rolodex(t, ['import', '--workspace', b.workspaceId, out]);
    assert.equal(i.code, 0, i.err);
  });

  test("a record line whose object is a custom type's slug is a record of that type; an unknown one is refused at object", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const lines = [...decided, { object: 'project', externalId: 'p-1', fields: { tier: { value: 'Gold', valueType: 'SINGLE_SELECT' } } }];
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'slug.ndjson', lines)]);
    assert.equal(r.code, 0, r.err);
    const page = await call(t, s.secret, 'GET', '/v1/objects/project');
    assert.equal(page.statusCode, 200, page.body);
    assert.equal(page.json().data.length, 1);
    const typo = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'typo.ndjson', [{ object: 'projects', externalId: 'p-2', fields: {} }])]);
    assert.notEqual(typo.code, 0);
    assert.match(typo.err, /line 1: object: "projects" is neither a kind of object nor a custom object type of this import or the workspace/);
  });

  test('a type that neither the file nor the workspace defines is refused before the first write, batched too', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const lines = [
      { object: 'account', externalId: 'a-1', fields: { $name: { value: 'Acme', valueType: 'TEXT' } } },
      { object: 'record', objectType: 'nosuch', externalId: 'n-1', fields: {} },
    ];
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--commit', 'batched', file(t, 'nosuch.ndjson', lines)]);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /line 2: objectType: no custom object type "nosuch" in this import or the workspace/);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });
});
