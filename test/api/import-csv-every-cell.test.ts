// The externalId column and the bad cells of a CSV row (docs/import.md §CSV): the externalId's
// column is named loosely, as a member's is (without case, spaces, `_` or `-`), but a field keyed
// so keeps its name; and every bad cell of a row is reported, each on its own line in the order of
// the columns, counted in the report's 100.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const FAILED = 'rolodex import: import failed, nothing was written:';
const DECIMAL = 'is not a number: write it in decimal digits, with "." before a fraction';

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

eachDialect('rolodex import of CSV: the externalId column and every bad cell', (ctx) => {
  test('the externalId column is named without case, spaces, _ or -; a field keyed external_id keeps its column', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const names = ['external_id', 'External Id', 'external-id', 'ExternalID', ' EXTERNAL ID ', 'externalId', 'External ID'];
    for (const [i, name] of names.entries()) {
      const r = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', '--json', file(t, `a${i}.csv`, `${name},Name\nx-${i},Acme ${i}\n`)]);
      assert.equal(r.code, 0, `${name}: ${r.err}`);
      const id = JSON.parse(r.out).ids.account[`x-${i}`] as string;
      assert.equal((await call(t, s.secret, 'GET', `/v1/accounts/${id}`)).json().fields.$name.value, `Acme ${i}`);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, names.length);
    // Two spellings of it are two externalId columns, refused as any column named twice.
    const twice = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'twice.csv', 'externalId,external_id\nx,y\n')]);
    assert.equal(twice.err, `${FAILED}\nline 1: external_id: names the externalId, as column "externalId" does; the externalId takes one column`);

    // A custom field keyed external_id (the old CRM's id, say) is named by its key.
    const op = operatorCtx(t.deps.db.kysely, ws);
    await addField(op, { objectType: 'contact', key: 'external_id', label: 'Old id', valueType: 'TEXT' });
    const r = await rolodex(t, ['import', '--workspace', ws, '--type', 'contact', '--json', file(t, 'c.csv', 'External-ID,external_id\nc-1,crm-77\n')]);
    assert.equal(r.code, 0, r.err);
    const id = JSON.parse(r.out).ids.contact['c-1'] as string;
    assert.equal((await call(t, s.secret, 'GET', `/v1/contacts/${id}`)).json().fields.external_id.value, 'crm-77');
  });

  test('every bad cell of a row is reported, in the order of its columns, within the 100; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const op = operatorCtx(t.deps.db.kysely, ws);
    await addField(op, { objectType: 'contact', key: 'born', label: 'Born', valueType: 'DATETIME' });
    await addField(op, { objectType: 'contact', key: 'score', label: 'Score', valueType: 'NUMBER' });
    await addField(op, { objectType: 'contact', key: 'home', label: 'Home', valueType: 'ADDRESS' });
    const rows =
      'Email,externalId,Score,Born,Home.latitude,Home.city,Name\n' +
      'nope,c1,x1,01/02/2024,91,Berlin,Ann\n' +
      'ok@a.test,c2,2,,,,Bo\n' +
      ',,abc,,x9,,Cy\n' +
      ',c4,,,95,,Di\n';
    const r = await rolodex(t, ['import', '--workspace', ws, '--type', 'contact', file(t, 'bad.csv', rows)]);
    assert.equal(r.code, 1, r.err);
    assert.equal(
      r.err,
      [
        FAILED,
        'line 2: Email: "nope" must be an email address.',
        `line 2: Score: "x1" ${DECIMAL}`,
        'line 2: Born: "01/02/2024" must be an ISO 8601 date-time with a time zone naming a real date and time, such as "2026-03-01T09:30:00Z".',
        'line 2: Home.latitude: "91" must be a number from -90 to 90.',
        'line 4: externalId: is required (a column named externalId)',
        `line 4: Score: "abc" ${DECIMAL}`,
        `line 4: Home.latitude: "x9" ${DECIMAL}`,
        'line 5: Home.latitude: "95" must be a number from -90 to 90.',
      ].join('\n'),
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);

    // Each bad cell is a line of the report, up to 100, then a count.
    const many = ['externalId,Email,Score'];
    for (let i = 0; i < 60; i++) many.push(`m-${i},bad-${i},n${i}`);
    const m = await rolodex(t, ['import', '--workspace', ws, '--type', 'contact', file(t, 'many.csv', many.join('\n'))]);
    assert.equal(m.code, 1, m.err);
    const lines = m.err.split('\n').filter((l) => /^line \d+:/.test(l));
    assert.equal(lines.length, 100);
    assert.deepEqual(lines.slice(0, 2), ['line 2: Email: "bad-0" must be an email address.', `line 2: Score: "n0" ${DECIMAL}`]);
    assert.equal(lines[99], `line 51: Score: "n49" ${DECIMAL}`);
    assert.match(m.err, /\n… and 20 more bad objects$/);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });
});
