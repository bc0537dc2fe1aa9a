// Unique fields through `rolodex import` (docs/import.md §Rules, docs/records.md §Definitions): a
// value another line of the import gives, or another record of the type holds, is refused with
// its line and field as the API refuses it (compared folded), and nothing of the import is
// written; a record imported again keeps its own value. An archived unique field's values too
// (`archivedFields`). Also through the bulk path.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BULK_LOAD } from '../../src/records/import.ts';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const CODE = {
  object: 'definition',
  externalId: 'd-code',
  definition: 'field',
  objectType: 'contact',
  key: 'code',
  label: 'Code',
  valueType: 'TEXT',
  unique: true,
};
const contact = (externalId: string, code: string) => ({
  object: 'contact',
  externalId,
  fields: { $name: { value: { firstName: 'Ann', lastName: externalId }, valueType: 'FULL_NAME' }, code: { value: code, valueType: 'TEXT' } },
});

async function importLines(t: TestApp, s: Seeded, name: string, lines: object[]) {
  const file = join(t.tdb.dataDir, `${name}-${s.workspaceId}.ndjson`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  return rolodex(t, ['import', '--workspace', s.workspaceId, file, '--commit', 'atomic']);
}

async function codes(t: TestApp, s: Seeded): Promise<string[]> {
  const r = await call(t, s.secret, 'GET', '/v1/contacts?limit=25');
  assert.equal(r.statusCode, 200, r.body);
  return (r.json().data as Array<{ fields: { code?: { value: string | null } } }>).map((c) => c.fields.code?.value ?? '').sort();
}

eachDialect('import: unique fields', (ctx) => {
  test('a value another line gives or another record holds is refused with its line; a record imported again keeps its own', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    assert.equal((await importLines(t, s, 'defs', [CODE])).code, 0);
    const api = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Bo', lastName: 'Api' }, code: 'K-1' } });
    assert.equal(api.statusCode, 200, api.body);

    const held = await importLines(t, s, 'held', [contact('c-1', 'A-1'), contact('c-2', 'k-1')]);
    assert.equal(held.code, 1);
    assert.match(held.err, /line 2: fields\.code\.value: "k-1": another contact already holds it; "code" is unique/);
    const twice = await importLines(t, s, 'twice', [contact('c-1', 'A-1'), contact('c-2', 'B-1'), contact('c-3', 'b-1')]);
    assert.equal(twice.code, 1);
    assert.match(twice.err, /line 3: fields\.code\.value: "b-1": line 2 gives it too; "code" is unique/);
    assert.deepEqual(await codes(t, s), ['K-1'], 'nothing of either import was written');

    const ok = [contact('c-1', 'A-1'), contact('c-2', 'B-1')];
    assert.equal((await importLines(t, s, 'ok', ok)).code, 0);
    const again = await importLines(t, s, 'again', ok);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(await codes(t, s), ['A-1', 'B-1', 'K-1']);
    // The API refuses the imported value as it refuses its own.
    const taken = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Cy', lastName: 'Api' }, code: 'a-1' } });
    assert.equal(taken.statusCode, 409, taken.body);
  });

  test("an archived unique field's value another record holds, or another line gives, is refused as well", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    assert.equal((await importLines(t, s, 'defs', [CODE])).code, 0);
    const api = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Bo', lastName: 'Api' }, code: 'K-1' } });
    assert.equal(api.statusCode, 200, api.body);
    const archive = await rolodex(t, ['definition', 'archive', '--workspace', s.workspaceId, '--type', 'contact', '--key', 'code']);
    assert.equal(archive.code, 0, archive.err);
    const hidden = (externalId: string, code: string) => ({
      object: 'contact',
      externalId,
      fields: { $name: { value: { firstName: 'Ann', lastName: externalId }, valueType: 'FULL_NAME' } },
      archivedFields: { code: { value: code, valueType: 'TEXT' } },
    });

    const held = await importLines(t, s, 'held', [hidden('c-1', 'A-1'), hidden('c-2', 'k-1')]);
    assert.equal(held.code, 1);
    assert.match(held.err, /line 2: archivedFields\.code\.value: "k-1": another contact already holds it; "code" is unique/);
    const twice = await importLines(t, s, 'twice', [hidden('c-1', 'A-1'), hidden('c-2', 'B-1'), hidden('c-3', 'b-1')]);
    assert.equal(twice.code, 1);
    assert.match(twice.err, /line 3: archivedFields\.code\.value: "b-1": line 2 gives it too; "code" is unique/);
    const ok = [hidden('c-1', 'A-1'), hidden('c-2', 'B-1')];
    assert.equal((await importLines(t, s, 'ok', ok)).code, 0);
    const again = await importLines(t, s, 'again', ok);
    assert.equal(again.code, 0, again.err);
    // The values stayed unique, so the field comes back.
    const unarchive = await rolodex(t, ['definition', 'unarchive', '--workspace', s.workspaceId, '--type', 'contact', '--key', 'code']);
    assert.equal(unarchive.code, 0, unarchive.err);
    assert.deepEqual(await codes(t, s), ['A-1', 'B-1', 'K-1']);
  });

  test('the bulk path refuses a value given twice', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const min = BULK_LOAD.min;
    BULK_LOAD.min = 2;
    try {
      const r = await importLines(t, s, 'bulk', [CODE, contact('c-1', 'X'), contact('c-2', 'Y'), contact('c-3', 'x')]);
      assert.equal(r.code, 1);
      assert.match(r.err, /line 4: fields\.code\.value: "x": line 2 gives it too/);
      assert.deepEqual(await codes(t, s), []);
    } finally {
      BULK_LOAD.min = min;
    }
  });

  test('a unique DATETIME held by a record is refused however the line writes the instant', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const signed = { ...CODE, externalId: 'd-signed', key: 'signed', label: 'Signed', valueType: 'DATETIME' };
    const line = (externalId: string, at: string) => ({
      object: 'contact',
      externalId,
      fields: { $name: { value: { firstName: externalId } }, signed: { value: at } },
    });
    assert.equal((await importLines(t, s, 'dt1', [signed, line('c-1', '2026-03-01T09:00:00Z')])).code, 0);
    const r = await importLines(t, s, 'dt2', [signed, line('c-2', '2026-03-01T10:00:00+01:00')]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /fields\.signed\.value: "2026-03-01T09:00:00\.000Z": another contact already holds it/);
    // The record holding it may be imported again with it.
    assert.equal((await importLines(t, s, 'dt3', [signed, line('c-1', '2026-03-01T09:00:00.000Z')])).code, 0);
  });
});
