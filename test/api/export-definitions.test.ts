// `rolodex export` of definitions (docs/import.md §Export, §definition), on both databases: what a
// definition holds beyond its key and label comes back from the import of the export (a TELEPHONE
// field's own default country, the descriptions of a custom select field's options), and the import
// of it into the workspace it came from changes nothing.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField, addOption } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

async function exported(t: TestApp, s: Seeded): Promise<string> {
  const file = join(t.tdb.dataDir, `definitions-${s.workspaceId}.ndjson`);
  const r = await rolodex(t, ['export', '--workspace', s.workspaceId, file]);
  assert.equal(r.code, 0, r.err);
  return file;
}

async function imported(t: TestApp, s: Seeded, file: string): Promise<void> {
  const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file]);
  assert.equal(r.code, 0, r.err);
}

/** The definition lines of an export alone, to import into the workspace it came from. */
function definitionsOf(file: string): string {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l && (JSON.parse(l) as { object: string }).object === 'definition');
  writeFileSync(`${file}.definitions`, lines.join('\n'));
  return `${file}.definitions`;
}

eachDialect('rolodex export: definitions', (ctx) => {
  test("a TELEPHONE field's own default country comes back, and the import compares it", async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, a.workspaceId), {
      objectType: 'account',
      key: 'office',
      label: 'Office',
      valueType: 'TELEPHONE',
      defaultCountry: 'de',
    });
    const file = await exported(t, a);
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => (l ? (JSON.parse(l) as Record<string, unknown>) : {}))
      .find((l) => l.key === 'office');
    assert.equal(line?.defaultCountry, 'DE');
    const b = await seedWorkspace(t);
    await imported(t, b, file);
    const res = await call(t, b.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', office: '030 1234567' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().fields.office.value, '+49301234567');
    await imported(t, a, definitionsOf(file));
    // Another country for the same field is a difference, refused as the others are.
    const other = join(t.tdb.dataDir, `office-${b.workspaceId}.ndjson`);
    const fr = { object: 'definition', externalId: 'o', definition: 'field', objectType: 'account', key: 'office', label: 'Office', valueType: 'TELEPHONE' };
    writeFileSync(other, JSON.stringify({ ...fr, defaultCountry: 'FR' }));
    const r = await rolodex(t, ['import', '--workspace', b.workspaceId, other]);
    assert.equal(r.code, 1);
    assert.match(r.err, /line 1: defaultCountry: field "office" of account exists with defaultCountry "DE", not "FR"/);
  });

  test("the descriptions of a custom select field's options come back", async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, a.workspaceId);
    await addField(op, { objectType: 'account', key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
    await addOption(op, { objectType: 'account', fieldKey: 'tier', label: 'Gold', description: 'Pays the most' });
    await addOption(op, { objectType: 'account', fieldKey: 'tier', label: 'Silver' });
    const file = await exported(t, a);
    const b = await seedWorkspace(t);
    await imported(t, b, file);
    const options = async (s: Seeded) =>
      ((await call(t, s.secret, 'GET', '/v1/accounts/definitions')).json().fieldDefinitions.tier.typeConfiguration.options as object[]).map((o) => ({
        ...o,
        id: undefined,
      }));
    assert.deepEqual(await options(b), [
      { id: undefined, label: 'Gold', description: 'Pays the most' },
      { id: undefined, label: 'Silver', description: null },
    ]);
    await imported(t, a, definitionsOf(file));
    assert.deepEqual(await options(a), await options(b));
  });
});
