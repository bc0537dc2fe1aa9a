// The errors of CSV cells (docs/import.md §CSV, §Rules): a bad cell's error quotes the cell, or
// the piece of a list that is bad, never the JSON path of its value (`"fields.$email[1]"`), which
// the file does not have; and a long cell or value is shown by its ends, so that a 1 MB cell does
// not make the report a megabyte.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField, addOption } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const FAILED = 'rolodex import: import failed, nothing was written:';

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

eachDialect('rolodex import: the errors of CSV cells', (ctx) => {
  test('an error quotes the bad cell or piece of a list, not the path of its value', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'contact', key: 'born', label: 'Born', valueType: 'DATETIME' });
    await addField(op, { objectType: 'contact', key: 'home', label: 'Home', valueType: 'ADDRESS' });
    const rows =
      'externalId,Name,Email,Born,Profile photo,Home.latitude\n' +
      'c1,Ann,ann@a.test;nope,,,\n' +
      'c2,Bo,,01/02/2024,,\n' +
      'c3,Cy,,,ftp://x,\n' +
      'c4,Di,,,,91\n' +
      'c5,Ed,ed@a.test;ed@a.test,,,\n';
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'contact', file(t, 'bad.csv', rows)]);
    assert.equal(r.code, 1, r.err);
    assert.equal(
      r.err,
      [
        FAILED,
        'line 2: Email: "nope" must be an email address.',
        'line 3: Born: "01/02/2024" must be an ISO 8601 date-time with a time zone naming a real date and time, such as "2026-03-01T09:30:00Z".',
        'line 4: Profile photo: "ftp://x" must be an absolute http or https URL (such as "https://acme.com") without spaces.',
        'line 5: Home.latitude: "91" must be a number from -90 to 90.',
        'line 6: Email: "ed@a.test" appears twice in the cell.',
      ].join('\n'),
    );
    // In an address given as a JSON object, a member it has no place for is named, not its value.
    const json = 'externalId,Home\nc6,"{""foo"":""bar""}"\nc7,"{""latitude"":""52.5""}"\n';
    const r2 = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'contact', file(t, 'json.csv', json)]);
    assert.equal(
      r2.err,
      [
        FAILED,
        'line 2: Home: "foo" is not a member of ADDRESS; known: street, street2, city, state, postalCode, country, latitude, longitude.',
        'line 3: Home: "52.5" must be a number or null.',
      ].join('\n'),
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });

  test('a row with another count of cells than the header is refused, counted in words', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const rows = 'externalId,Name\nc1;Ann\nc2,Bo,x\n';
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'contact', file(t, 'count.csv', rows)]);
    assert.equal(r.code, 1, r.err);
    assert.equal(r.err, `${FAILED}\nline 2: (row): has 1 cell, the header 2\nline 3: (row): has 3 cells, the header 2`);
  });

  test('a relationship cell naming an externalId over 255 characters is told the bound', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const rows = `externalId,Name,Accounts\nc1,Ann,a-1;${'a'.repeat(256)}\n`;
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'contact', file(t, 'long.csv', rows)]);
    assert.equal(r.code, 1, r.err);
    assert.equal(r.err, `${FAILED}\nline 2: Accounts: must be an externalId, a string of 1 to 255 characters`);
  });

  test('a long cell or value is shown by its ends in its error, CSV and NDJSON alike', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'contact', key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
    await addOption(op, { objectType: 'contact', fieldKey: 'tier', label: 'Gold' });
    await addField(op, { objectType: 'contact', key: 'score', label: 'Score', valueType: 'NUMBER' });
    await addField(op, { objectType: 'contact', key: 'vip', label: 'VIP', valueType: 'CHECKBOX' });
    await addField(op, { objectType: 'contact', key: 'notes', label: 'Notes', valueType: 'TEXT' });
    const big = `${'a'.repeat(1 << 20)}z`;
    const shown = `"${'a'.repeat(20)}…${'a'.repeat(9)}z"`;
    const rows = `externalId,Tier,Score,VIP,Notes\nc1,${big},,,\nc2,,${big},,\nc3,,,${big},\nc4,,,,${big}\n`;
    const r1 = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'contact', file(t, 'big.csv', rows)]);
    assert.equal(r1.code, 1, r1.err);
    assert.equal(
      r1.err,
      [
        FAILED,
        `line 2: Tier: ${shown} is not an option of Tier; valid labels: Gold`,
        `line 3: Score: ${shown} is not a number: write it in decimal digits, with "." before a fraction`,
        `line 4: VIP: ${shown} is not a checkbox value (true, false, yes, no, 1, 0)`,
        `line 5: Notes: ${shown} must be at most 10000 characters.`,
      ].join('\n'),
    );

    const line = JSON.stringify({ object: 'contact', externalId: 'c1', fields: { tier: { value: big } } });
    const r2 = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'big.ndjson', `${line}\n`)]);
    assert.equal(r2.code, 1, r2.err);
    assert.equal(r2.err, `${FAILED}\nline 1: fields.tier.value: ${shown} is neither an option id nor the label of an option of tier.`);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });
});
