// An NDJSON line that is not JSON is reported at its line of the file and its column in that line
// (docs/import.md §Format): JSON.parse's own place, "(line 1 column 2)", counted the lines of the
// one line it read, so that `line 7: … (line 1 column 2)` named two lines. A JSON array keeps the
// line and column in the file, which there are the file's.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const account = (id: string) => JSON.stringify({ object: 'account', externalId: id, fields: { $name: { value: id } } });

eachDialect('rolodex import of a line that is not JSON', (ctx) => {
  test('NDJSON: the line of the file and the column in it, white space before the object counted', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const path = join(t.tdb.dataDir, 'broken.ndjson');
    writeFileSync(path, [account('a-1'), '{bad json', account('a-2'), `   {"object":"account","externalId":"a-3",}`].join('\n'));
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, path]);
    assert.equal(r.code, 1, r.err);
    const lines = r.err.split('\n');
    assert.equal(lines[1], `line 2: (line): not valid JSON: Expected property name or '}' in JSON at column 2`);
    assert.equal(lines[2], `line 4: (line): not valid JSON: Expected double-quoted property name in JSON at column 43`);
    assert.doesNotMatch(r.err, /line 1 column/);
  });

  test('a JSON array: the line and column in the file', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const path = join(t.tdb.dataDir, 'broken.json');
    writeFileSync(path, `[${account('a-1')},\n  {bad}]`);
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, path]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /line 0: \(file\): not valid JSON: .* \(line 2 column 4\)/);
  });
});
