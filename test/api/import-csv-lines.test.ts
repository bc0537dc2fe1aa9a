// The line of a CSV row in `rolodex import`'s errors (docs/import.md §CSV) is the line of the file
// it starts on, whatever line breaks quoted cells before it or in it hold (`\n`, `\r\n`, `\r`);
// so is the line of a row that is not valid CSV, and its error names no other line. Every line
// break ends a row, whichever the header's is.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { MAX_ROW_BYTES } from '../../src/records/csv-rows.ts';

eachDialect('rolodex import of CSV: lines of rows', (ctx) => {
  test('a row is reported at the line it starts on, after cells holding line breaks of every kind', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const rows = [
      'externalId,Name,Website', // line 1
      'a1,"Acme\r\nHoldings\r\nGroup",', // lines 2-4: a cell with Windows line breaks
      'a2,Beta,not a url', // line 5
      'a3,"Gamma\nCorp",also not a url', // lines 6-7: a bad row spanning two lines
      '', // line 8, empty: skipped
      'a4,"Delta\rInc",', // lines 9-10: an old Mac line break, as editors show it
      'a5,Epsilon,nor this', // line 11
    ];
    const path = join(t.tdb.dataDir, 'lines.csv');
    writeFileSync(path, `${rows.join('\r\n')}\r\n`);
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path]);
    assert.equal(r.code, 1, r.err);
    const lines = r.err.split('\n').filter((l) => /^line \d+:/.test(l));
    assert.deepEqual(
      lines.map((l) => /^line (\d+): Website: /.exec(l)?.[1]),
      ['5', '6', '11'],
      r.err,
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);

    // Imported once fixed, the cells keep their line breaks as written.
    writeFileSync(path, `${rows.map((row) => row.replace(/,[a-z ]+url$|,nor this$/, ',')).join('\r\n')}\r\n`);
    const ok = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path, '--json']);
    assert.equal(ok.code, 0, ok.err);
    const acme = (await call(t, s.secret, 'GET', `/v1/accounts/${JSON.parse(ok.out).ids.account.a1}`)).json();
    assert.equal(acme.fields.$name.value, 'Acme\r\nHoldings\r\nGroup');
  });

  test('a row that is not valid CSV is reported at the line it starts on, with its column, and no other line', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const head = ['externalId,Name', 'a1,"Acme\r\nHoldings\r\nGroup"', '', 'a2,Beta']; // lines 1, 2-4, 5 (empty), 6
    const cases: [string, string][] = [
      ['a3,"Gamma\r\nCorp"x', 'a quoted cell\'s closing quote is followed by "x", not by a comma or the end of the line'],
      ['a3,Gam"ma"', 'a quote inside a cell that does not start with one: quote the whole cell and double each quote in it'],
      ['a3,"Gamma\r\nCorp', 'a quoted cell is not closed: the file ends before its closing quote'],
    ];
    for (const [bad, message] of cases) {
      const path = join(t.tdb.dataDir, 'bad.csv');
      writeFileSync(path, `${[...head, bad, 'a4,Delta'].join('\r\n')}\r\n`);
      const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path]);
      assert.equal(r.code, 1, r.err);
      const lines = r.err.split('\n').filter((l) => /^line \d+:/.test(l));
      assert.deepEqual(lines, [`line 7: Name: not valid CSV: ${message}`], r.err);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });

  test("rows whose lines end otherwise than the header's are rows each, never cells joined across lines", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const path = join(t.tdb.dataDir, 'mixed.csv');
    // A Windows header, then rows ending in `\n`, `\r` and `\r\n`, as files appended to elsewhere end.
    const text = 'externalId,Name,Website\r\na1,Acme,\na2,"Beta",not a url\ra3,Gamma,\r\n\na4,"Delta",nor this\n';
    writeFileSync(path, text);
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path]);
    assert.equal(r.code, 1, r.err);
    const lines = r.err.split('\n').filter((l) => /^line \d+:/.test(l));
    assert.deepEqual(
      lines.map((l) => /^line (\d+): Website: /.exec(l)?.[1]),
      ['3', '6'],
      r.err,
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);

    writeFileSync(path, text.replace(/,(not a url|nor this)/g, ','));
    const ok = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path, '--json']);
    assert.equal(ok.code, 0, ok.err);
    assert.deepEqual(Object.keys(JSON.parse(ok.out).ids.account), ['a1', 'a2', 'a3', 'a4']);
    const names = (await call(t, s.secret, 'GET', '/v1/accounts')).json().data.map((a: { fields: { $name: { value: string } } }) => a.fields.$name.value);
    assert.deepEqual(names.toSorted(), ['Acme', 'Beta', 'Delta', 'Gamma']);

    // A file of one column, where joined lines made one externalId of several.
    writeFileSync(path, 'externalId\r\nb1\nb2\rb3\r\n');
    const one = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path, '--json']);
    assert.equal(one.code, 0, one.err);
    assert.deepEqual(Object.keys(JSON.parse(one.out).ids.account), ['b1', 'b2', 'b3']);
  });

  test('a row whose cells are all empty or white space is skipped, as a spreadsheet writes them; a row with one cell is checked', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const path = join(t.tdb.dataDir, 'blank-rows.csv');
    const rows = [
      'externalId,Name,Website', // line 1
      'a1,Acme,', // line 2
      ',,', // line 3: skipped
      ' , ,""', // line 4: white space and an empty quoted cell, skipped
      '   ', // line 5: one cell of spaces, skipped
      ',Nameless,', // line 6: a cell, so checked
      'a2,Beta,not a url', // line 7
      ',,,,', // line 8: more cells than the header, all empty: skipped
      ',,', // line 9: skipped
    ];
    writeFileSync(path, `${rows.join('\r\n')}\r\n`);
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path]);
    assert.equal(r.code, 1, r.err);
    const lines = r.err.split('\n').filter((l) => /^line \d+:/.test(l));
    assert.deepEqual(
      lines.map((l) => /^line (\d+): (\S+):/.exec(l)?.slice(1).join(' ')),
      ['6 externalId', '7 Website'],
      r.err,
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);

    writeFileSync(
      path,
      `${rows
        .filter((row) => !row.includes('Nameless'))
        .map((row) => row.replace(',not a url', ','))
        .join('\r\n')}\r\n`,
    );
    const ok = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path, '--json']);
    assert.equal(ok.code, 0, ok.err);
    assert.deepEqual(JSON.parse(ok.out).counts, { account: 2 });
  });

  test('a quoted cell left open ends the read once its row is longer than the most a row holds, at its line', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const path = join(t.tdb.dataDir, 'open.csv');
    // Without a quote after it, the open cell runs to the end of the file, far past the bound.
    const rest = `${'x'.repeat(1023)}\n`.repeat(MAX_ROW_BYTES / 1024 + 1024);
    writeFileSync(path, `externalId,Name\r\na1,Beta\r\na2,"Gamma\r\n${rest}a3,Delta\r\n`);
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, '--type', 'account', path]);
    assert.equal(r.code, 1, r.err);
    const lines = r.err.split('\n').filter((l) => /^line \d+:/.test(l));
    assert.deepEqual(lines, ["line 3: Name: not valid CSV: the row is longer than 16 MiB, the most a row holds: is a quoted cell's closing quote missing?"]);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });
});
