// A CSV header that names nothing because of its shape (docs/import.md §CSV): a column without a
// name is named by its place, and a header whose names another character separates says so,
// instead of "names no field" for a blank name or for the whole line, or "not valid CSV" for its
// quotes, whatever commas its quoted names hold.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const SEMICOLONS = 'separates its names with ";": the cells of a CSV file are separated by commas';
const TABS = 'separates its names with tabs: the cells of a CSV file are separated by commas';

eachDialect('rolodex import of CSV: headers of the wrong shape', (ctx) => {
  test('a column without a name, and names separated by ";" or tabs, are refused with what to do; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const cases: Array<[string, string]> = [
      ['externalId,Name,\na1,Acme,\n', 'line 1: (column 3): has no name: name the field, relationship or externalId it holds, or remove the column'],
      ['externalId,, Name\na1,x,Acme\n', 'line 1: (column 2): has no name: name the field, relationship or externalId it holds, or remove the column'],
      ['externalId;Name\na1;Acme\n', `line 1: (header): ${SEMICOLONS}`],
      ['externalId\tName\na1\tAcme\n', `line 1: (header): ${TABS}`],
      // A comma in a name does not hide the separator: only those outside quotes are counted.
      ['externalId;$name;Smith, Inc\na1;Acme;x\n', `line 1: (header): ${SEMICOLONS}`],
      ['externalId;$name;"Smith, Inc"\na1;Acme;x\n', `line 1: (header): ${SEMICOLONS}`],
      ['"externalId";"Name";"Tier, level"\n"a1";"Acme";"x"\n', `line 1: (header): ${SEMICOLONS}`],
      ['\n\nexternalId;Name, short;Tier\na1;Acme;x\n', `line 3: (header): ${SEMICOLONS}`],
      ['externalId\t"Name, full"\tTier\na1\tAcme\tx\n', `line 1: (header): ${TABS}`],
      // A comma-separated header whose quoted names hold ";" is not taken for one.
      ['externalId,"a;b;c"\na1,x\n', 'line 1: a;b;c: names no field or relationship of account; fields: '],
    ];
    for (const [text, error] of cases) {
      const path = join(t.tdb.dataDir, 'header.csv');
      writeFileSync(path, text);
      const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path]);
      assert.equal(r.code, 1, r.err);
      assert.ok(r.err.startsWith(`rolodex import: import failed, nothing was written:\n${error}`), `${JSON.stringify(text)}: ${r.err}`);
      if (!error.endsWith(' ')) assert.equal(r.err, `rolodex import: import failed, nothing was written:\n${error}`);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });
});
