// CSV cells of numbers and of address members (docs/import.md §CSV): a number is decimal (hex,
// binary and octal forms are refused, not read as other numbers; a thousands separator is named),
// and an error of an address member names that member's column, wherever the column is. A cell's
// line breaks never break the report's one line per error.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

const FIELDS = ['revenue:NUMBER', 'arr:CURRENCY']
  .map((f) => f.split(':') as [string, string])
  .map(([key, valueType]) =>
    JSON.stringify({ object: 'definition', externalId: `d-${key}`, definition: 'field', objectType: 'account', key, label: key.toUpperCase(), valueType }),
  )
  .join('\n');
const FAILED = 'rolodex import: import failed, nothing was written:';
const DECIMAL = 'is not a number: write it in decimal digits, with "." before a fraction';

eachDialect('rolodex import of CSV number and address cells', (ctx) => {
  test('a number cell is decimal: 0x10, 0b11 and 0o7 are refused, a thousands separator is named; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    assert.equal((await rolodex(t, ['import', '--workspace', ws, file(t, 'defs.ndjson', FIELDS)])).code, 0);
    const bad = 'externalId,Name,REVENUE,ARR\na-1,A,0x10,1\na-2,B,2,0b11\na-3,C,"1,000",0o7\na-4,D,1 000.5,\n';
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'bad.csv', bad)]);
    assert.equal(r1.code, 1, r1.err);
    assert.equal(
      r1.err,
      [
        FAILED,
        `line 2: REVENUE: "0x10" ${DECIMAL}`,
        `line 3: ARR: "0b11" ${DECIMAL}`,
        `line 4: REVENUE: "1,000" ${DECIMAL}, without thousands separators`,
        `line 4: ARR: "0o7" ${DECIMAL}`,
        `line 5: REVENUE: "1 000.5" ${DECIMAL}, without thousands separators`,
      ].join('\n'),
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);

    const good = 'externalId,Name,REVENUE,ARR\na-1,A,-1.25,+.5\na-2,B,12e3,5.\n';
    const r2 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'good.csv', good), '--json']);
    assert.equal(r2.code, 0, r2.err);
    const ids = JSON.parse(r2.out).ids.account as Record<string, string>;
    const values = async (id: string) => {
      const fields = (await call(t, s.secret, 'GET', `/v1/accounts/${id}`)).json().fields;
      return [fields.revenue.value, fields.arr.value];
    };
    assert.deepEqual(await values(ids['a-1'] as string), [-1.25, 0.5]);
    assert.deepEqual(await values(ids['a-2'] as string), [12000, 5]);
  });

  test('a bad cell holding line breaks is one line of the report, its breaks shown as \\n and \\r', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    assert.equal((await rolodex(t, ['import', '--workspace', ws, file(t, 'defs.ndjson', FIELDS)])).code, 0);
    const accounts = 'externalId,REVENUE\na-1,"1\n000"\na-2,"12\r\n5"\n';
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'bad.csv', accounts)]);
    assert.equal(r1.err, [FAILED, `line 2: REVENUE: "1\\n000" ${DECIMAL}`, `line 4: REVENUE: "12\\r\\n5" ${DECIMAL}`].join('\n'));
    const contacts = 'externalId,Accounts\nc-1,"a-9\rx"\n';
    const r2 = await rolodex(t, ['import', '--workspace', ws, '--type', 'contact', file(t, 'bad.csv', contacts)]);
    assert.equal(r2.err, `${FAILED}\nline 2: Accounts: no account with externalId "a-9\\rx" in this import or the workspace`);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });

  test("an address member's error names its own column, and a member's number is decimal", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const rows =
      'externalId,Name,Primary address.latitude,Primary address.country,City\n' +
      'a-1,A,91,DE,Berlin\na-2,B,0x1F,FR,Paris\na-3,C,abc,FR,Paris\na-4,D,45,XX,Paris\na-5,E,48.85,fr,Paris\n';
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'places.csv', rows)]);
    assert.equal(r1.code, 1, r1.err);
    const lines = r1.err.split('\n');
    assert.equal(lines[0], FAILED);
    assert.match(lines[1] ?? '', /^line 2: Primary address\.latitude: .*must be a number from -90 to 90/);
    assert.equal(lines[2], `line 3: Primary address.latitude: "0x1F" ${DECIMAL}`);
    assert.equal(lines[3], `line 4: Primary address.latitude: "abc" ${DECIMAL}`);
    assert.match(lines[4] ?? '', /^line 5: Primary address\.country: .*ISO 3166-1 alpha-2/);
    assert.equal(lines.length, 5, r1.err);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);

    const r2 = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      '--type',
      'account',
      file(
        t,
        'paris.csv',
        rows
          .split('\n')
          .filter((l, i) => i === 0 || l.startsWith('a-5'))
          .join('\n'),
      ),
    ]);
    assert.equal(r2.code, 0, r2.err);
    const [paris] = (await call(t, s.secret, 'GET', '/v1/accounts')).json().data as { fields: Record<string, { value: unknown }> }[];
    assert.deepEqual(paris?.fields.$primaryAddress?.value, { latitude: 48.85, country: 'FR', city: 'Paris' });
  });
});
