// `rolodex export` of the workspace's settings (docs/import.md §`workspace`, §Export), on both
// databases: the default country that places national telephone numbers comes back from the import
// of an export into an empty workspace, so that the copy takes the numbers the original takes; a
// `workspace` line sets it in a workspace that exists, null clears it, and a file holds one line.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

async function office(t: TestApp, s: Seeded): Promise<void> {
  await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'office', label: 'Office', valueType: 'TELEPHONE' });
}

/** A national number written through the API: its status and the stored value. */
async function national(t: TestApp, s: Seeded) {
  const res = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', office: '030 1234567' } });
  return { status: res.statusCode, value: res.statusCode === 200 ? res.json().fields.office.value : res.body };
}

async function importText(t: TestApp, s: Seeded, lines: unknown[]) {
  const file = join(t.tdb.dataDir, `workspace-${s.workspaceId}-${Math.random().toString(36).slice(2)}.ndjson`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  return rolodex(t, ['import', '--workspace', s.workspaceId, file, '--json']);
}

eachDialect('rolodex export: workspace settings', (ctx) => {
  test("the workspace's default country comes back: the copy takes the national numbers the original takes", async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    await office(t, a);
    assert.equal((await rolodex(t, ['workspace', 'set', '--workspace', a.workspaceId, '--default-country', 'de'])).code, 0);
    assert.deepEqual(await national(t, a), { status: 200, value: '+49301234567' });
    const file = join(t.tdb.dataDir, 'workspace.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, file]);
    assert.equal(ex.code, 0, ex.err);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.filter((l) => l.object === 'workspace'),
      [{ object: 'workspace', defaultCountry: 'DE' }],
    );
    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file, '--json']);
    assert.equal(im.code, 0, im.err);
    assert.equal(JSON.parse(im.out).counts.workspace, 1);
    assert.deepEqual(await national(t, b), { status: 200, value: '+49301234567' });
    // Imported again, the line changes nothing.
    assert.equal((await rolodex(t, ['import', '--workspace', b.workspaceId, file])).code, 0);
    assert.deepEqual(await national(t, b), { status: 200, value: '+49301234567' });
  });

  test('a workspace without a default country exports no workspace line', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const file = join(t.tdb.dataDir, 'plain.ndjson');
    assert.equal((await rolodex(t, ['export', '--workspace', a.workspaceId, file])).code, 0);
    assert.ok(!readFileSync(file, 'utf8').includes('"object":"workspace"'));
  });

  test('a workspace line sets, clears or keeps the setting of a workspace that exists; a second line is refused', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await office(t, s);
    assert.equal(JSON.parse((await importText(t, s, [{ object: 'workspace', defaultCountry: 'fr' }])).out).counts.workspace, 1);
    assert.deepEqual(await national(t, s), { status: 200, value: '+33301234567' });
    // A line without the member leaves the setting as it is.
    assert.equal((await importText(t, s, [{ object: 'workspace' }])).code, 0);
    assert.deepEqual(await national(t, s), { status: 200, value: '+33301234567' });
    const twice = await importText(t, s, [
      { object: 'workspace', defaultCountry: 'DE' },
      { object: 'workspace', defaultCountry: null },
    ]);
    assert.equal(twice.code, 1);
    assert.match(twice.err, /line 2: .*workspace.* appears twice/);
    assert.deepEqual(await national(t, s), { status: 200, value: '+33301234567' }, 'nothing written');
    const named = await importText(t, s, [
      { object: 'workspace', externalId: 'w-1', defaultCountry: 'DE' },
      { object: 'workspace', externalId: 'w-2' },
    ]);
    assert.equal(named.code, 1);
    assert.match(named.err, /line 2: \(object\): line 1 is a workspace line too: a file holds one/);
    assert.deepEqual(await national(t, s), { status: 200, value: '+33301234567' }, 'nothing written');
    const bad = await importText(t, s, [{ object: 'workspace', defaultCountry: 'XX' }]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /line 1: defaultCountry: must be an ISO 3166-1 alpha-2 country code/);
    // null clears it: a national number is refused again.
    assert.equal((await importText(t, s, [{ object: 'workspace', defaultCountry: null }])).code, 0);
    assert.equal((await national(t, s)).status, 400);
  });
});
