// How `rolodex import` chooses a file's format without --format (docs/import.md §Format): `.csv`
// is CSV, any other NDJSON (or a JSON array); a `.tsv` file is refused in one line saying what to
// do, and a file read as NDJSON whose first line is a table's header is refused at that line
// alone, with the way to import it, instead of "not valid JSON" at every line.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const FAILED = 'rolodex import: import failed, nothing was written:';
const TSV_HINT = 'it looks like the header of tab-separated values: save the file as comma-separated CSV and import that with --format csv --type T';
const CSV_HINT = 'it looks like the header of a CSV file: import it with --format csv --type T';

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

eachDialect('rolodex import: the format of a file without --format', (ctx) => {
  test('a .tsv file is refused in one line, with or without --type; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const path = file(t, 'People.TSV', 'externalId\tName\nc1\tAnn\nc2\tBo\n');
    const refusal = `rolodex import: cannot read ${path}: a .tsv file holds tab-separated values, which the import does not read: save it as comma-separated CSV and import that with --type T`;
    for (const args of [[], ['--type', 'contact']]) {
      const r = await rolodex(t, ['import', '--workspace', ws, ...args, path]);
      assert.equal(r.code, 1, r.err);
      assert.equal(r.err, refusal);
    }
    // --format says what the file holds: as CSV, its header's tabs are named (docs/import.md §CSV).
    const csv = await rolodex(t, ['import', '--workspace', ws, '--format', 'csv', '--type', 'contact', path]);
    assert.equal(csv.err, `${FAILED}\nline 1: (header): separates its names with tabs: the cells of a CSV file are separated by commas`);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });

  test('a table read as NDJSON is refused at its header alone, saying how to import it; other lines keep their error', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const cases: Array<[string, string, string]> = [
      ['people.txt', 'externalId\tName\tEmail\nc1\tAnn\tann@a.test\nc2\tBo\t\n', `line 1: (line): not valid JSON: ${TSV_HINT}`],
      ['people.txt', '\ufeff\n"External ID","Name, full"\nc1,Ann\nc2,Bo\n', `line 2: (line): not valid JSON: ${CSV_HINT}`],
      ['export', 'externalId;Name\nc1;Ann\n', `line 1: (line): not valid JSON: ${CSV_HINT}`],
      ['data.ndjson', 'externalId,Name\n', `line 1: (line): not valid JSON: ${CSV_HINT}`],
    ];
    for (const [name, text, error] of cases) {
      const r = await rolodex(t, ['import', '--workspace', ws, file(t, name, text)]);
      assert.equal(r.code, 1, r.err);
      assert.equal(r.err, `${FAILED}\n${error}`, JSON.stringify(text));
    }
    // A line of JSON first, or a line that is no header, is read as NDJSON is: every bad line reported.
    const later = await rolodex(t, ['import', '--workspace', ws, file(t, 'later.ndjson', '{"object":"account","externalId":"a1"}\na,b\nc,d\n')]);
    assert.equal(later.code, 1, later.err);
    assert.match(later.err, /^line 2: \(line\): not valid JSON: Unexpected token/m);
    assert.match(later.err, /^line 3: \(line\): not valid JSON: Unexpected token/m);
    const broken = await rolodex(t, ['import', '--workspace', ws, file(t, 'broken.ndjson', '{"object":,\n{"object":,\n')]);
    assert.equal(broken.code, 1, broken.err);
    assert.match(broken.err, /^line 1: \(line\): not valid JSON: Unexpected token/m);
    assert.match(broken.err, /^line 2: \(line\): not valid JSON: Unexpected token/m);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });
});
