// A record's values of archived fields through an import that updates it (docs/import.md
// §`account`, `contact`, `opportunity`, §CSV): a CSV row, or an NDJSON line without
// `archivedFields`, keeps them, as the operator sees none of them; an NDJSON line with
// `archivedFields` replaces them (`{}` clears them). Kept values stay unique. A CSV column naming
// an archived field is refused, saying it is archived.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const definition = (key: string, unique = false) => ({
  object: 'definition',
  definition: 'field',
  objectType: 'contact',
  key,
  label: key,
  valueType: 'TEXT',
  archived: true,
  ...(unique ? { unique: true } : {}),
});
const name = (last: string) => ({ $name: { value: { firstName: 'Ann', lastName: last }, valueType: 'FULL_NAME' } });

async function importText(t: TestApp, s: Seeded, file: string, text: string, ...flags: string[]) {
  const path = join(t.tdb.dataDir, file);
  writeFileSync(path, text);
  return rolodex(t, ['import', '--workspace', s.workspaceId, ...flags, path]);
}
const ndjson = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n');

/** The archived values of each contact, by externalId, as `rolodex export` writes them. */
async function archivedValues(t: TestApp, s: Seeded): Promise<Record<string, unknown>> {
  const file = join(t.tdb.dataDir, `export-${s.workspaceId}.ndjson`);
  const r = await rolodex(t, ['export', '--workspace', s.workspaceId, '--types', 'contact', file]);
  assert.equal(r.code, 0, r.err);
  const out: Record<string, unknown> = {};
  for (const text of readFileSync(file, 'utf8').trim().split('\n')) {
    const line = JSON.parse(text) as { object: string; externalId: string; archivedFields?: Record<string, { value: unknown }> };
    if (line.object !== 'contact') continue;
    out[line.externalId] = Object.fromEntries(Object.entries(line.archivedFields ?? {}).map(([k, v]) => [k, v.value]));
  }
  return out;
}

eachDialect('import: archived values of an updated record', (ctx) => {
  test('a CSV row or a line without archivedFields keeps them; a line with archivedFields replaces them, {} clears them', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const first = await importText(
      t,
      s,
      'first.ndjson',
      ndjson([
        definition('old'),
        definition('grade'),
        ...['c-1', 'c-2', 'c-3', 'c-4'].map((externalId) => ({
          object: 'contact',
          externalId,
          fields: name(externalId),
          archivedFields: { old: { value: `old of ${externalId}` }, grade: { value: 'A' } },
        })),
      ]),
    );
    assert.equal(first.code, 0, first.err);

    const csv = await importText(t, s, 'rows.csv', 'externalId,First Name,Last Name\nc-1,Bo,Renamed\n', '--type', 'contact');
    assert.equal(csv.code, 0, csv.err);
    const lines = await importText(
      t,
      s,
      'lines.ndjson',
      ndjson([
        { object: 'contact', externalId: 'c-2', fields: name('Renamed') },
        { object: 'contact', externalId: 'c-3', fields: name('c-3'), archivedFields: { grade: { value: 'B' } } },
        { object: 'contact', externalId: 'c-4', fields: name('c-4'), archivedFields: {} },
      ]),
    );
    assert.equal(lines.code, 0, lines.err);

    assert.deepEqual(await archivedValues(t, s), {
      'c-1': { old: 'old of c-1', grade: 'A' },
      'c-2': { old: 'old of c-2', grade: 'A' },
      'c-3': { grade: 'B' },
      'c-4': {},
    });
    const c1 = (await call(t, s.secret, 'GET', '/v1/contacts?limit=10')).json().data as Array<{
      externalId: string;
      fields: Record<string, { value: unknown }>;
    }>;
    const row = c1.find((c) => c.externalId === 'c-1');
    assert.deepEqual(row?.fields.$name?.value, { firstName: 'Bo', lastName: 'Renamed' });
    assert.ok(!('old' in (row?.fields ?? {})), 'still hidden');
    // Brought back, the kept values show again.
    const unarchive = await rolodex(t, ['definition', 'unarchive', '--workspace', s.workspaceId, '--type', 'contact', '--key', 'old']);
    assert.equal(unarchive.code, 0, unarchive.err);
    const back = (await call(t, s.secret, 'GET', '/v1/contacts?limit=10')).json().data as Array<{
      externalId: string;
      fields: Record<string, { value: unknown }>;
    }>;
    assert.equal(back.find((c) => c.externalId === 'c-1')?.fields.old?.value, 'old of c-1');
  });

  test('a kept value of an archived unique field stays its record’s: another record is refused it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const first = await importText(
      t,
      s,
      'first.ndjson',
      ndjson([definition('code', true), { object: 'contact', externalId: 'c-1', fields: name('c-1'), archivedFields: { code: { value: 'K-1' } } }]),
    );
    assert.equal(first.code, 0, first.err);
    const csv = await importText(t, s, 'rows.csv', 'externalId,Last Name\nc-1,Renamed\n', '--type', 'contact');
    assert.equal(csv.code, 0, csv.err);
    const taken = await importText(
      t,
      s,
      'taken.ndjson',
      ndjson([{ object: 'contact', externalId: 'c-2', fields: name('c-2'), archivedFields: { code: { value: 'k-1' } } }]),
    );
    assert.equal(taken.code, 1, 'c-1 still holds K-1');
    assert.match(taken.err, /line 1: archivedFields\.code\.value: "k-1": another contact already holds it; "code" is unique/);
    // Given up explicitly, the value is free for another record of a later import.
    const freed = await importText(t, s, 'freed.ndjson', ndjson([{ object: 'contact', externalId: 'c-1', fields: name('c-1'), archivedFields: {} }]));
    assert.equal(freed.code, 0, freed.err);
    const again = await importText(
      t,
      s,
      'again.ndjson',
      ndjson([{ object: 'contact', externalId: 'c-2', fields: name('c-2'), archivedFields: { code: { value: 'k-1' } } }]),
    );
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(await archivedValues(t, s), { 'c-1': {}, 'c-2': { code: 'k-1' } });
  });

  test('a CSV column naming an archived field, by key or label, is refused saying it is archived', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const first = await importText(t, s, 'first.ndjson', ndjson([{ ...definition('old'), label: 'Old grade' }]));
    assert.equal(first.code, 0, first.err);
    const why =
      "names the archived field old (Old grade), whose values a CSV row cannot hold: rolodex definition unarchive brings it back, or an NDJSON line's archivedFields holds them";
    for (const header of ['old', 'OLD GRADE']) {
      const csv = await importText(t, s, 'rows.csv', `externalId,${header}\nc-1,x\n`, '--type', 'contact');
      assert.equal(csv.code, 1, csv.err);
      assert.equal(csv.err, `rolodex import: import failed, nothing was written:\nline 1: ${header}: ${why}`);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });
});
