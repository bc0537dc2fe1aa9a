// A CSV header that names nothing because of its shape (docs/import.md §CSV): a column without a
// name is named by its place, and a header whose names another character separates says so,
// instead of "names no field" for a blank name or for the whole line.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

eachDialect('rolodex import of CSV: headers of the wrong shape', (ctx) => {
  test('a column without a name, and names separated by ";" or tabs, are refused with what to do; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const cases: Array<[string, string]> = [
      ['externalId,Name,\na1,Acme,\n', 'line 1: (column 3): has no name: name the field, relationship or externalId it holds, or remove the column'],
      ['externalId,, Name\na1,x,Acme\n', 'line 1: (column 2): has no name: name the field, relationship or externalId it holds, or remove the column'],
      ['externalId;Name\na1;Acme\n', 'line 1: (header): is one column whose names ";" separate: the cells of a CSV file are separated by commas'],
      ['externalId\tName\na1\tAcme\n', 'line 1: (header): is one column whose names tabs separate: the cells of a CSV file are separated by commas'],
    ];
    for (const [text, error] of cases) {
      const path = join(t.tdb.dataDir, 'header.csv');
      writeFileSync(path, text);
      const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path]);
      assert.equal(r.code, 1, r.err);
      assert.equal(r.err, `rolodex import: import failed, nothing was written:\n${error}`);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });
});
