// U+2028 and U+2029 (line and paragraph separators) inside an NDJSON line (docs/import.md
// §Format), on both databases. JSON strings hold them as they are, and `rolodex export` writes
// them so (JSON.stringify escapes neither); only `\r\n`, `\n` and `\r` end a line. Node's readline
// ended one at each of them too, so an export of a value the API took could not be imported back
// (`not valid JSON: Unterminated string`), and the lines after were numbered one too many.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const NAME = 'Acme\u2028Ltd\u2029Berlin';

eachDialect('import: line and paragraph separators inside a line', (ctx) => {
  test('an export holding them is imported back, into its workspace and a new one', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const made = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: NAME } });
    assert.equal(made.statusCode, 200, made.body);
    const out = join(t.tdb.dataDir, 'out.ndjson');
    const exported = await rolodex(t, ['export', '--workspace', s.workspaceId, out]);
    assert.equal(exported.code, 0, exported.err);
    assert.ok(readFileSync(out, 'utf8').includes(NAME), 'the export writes them as they are');
    const again = await rolodex(t, ['import', '--workspace', s.workspaceId, out]);
    assert.equal(again.code, 0, again.err);
    const other = await seedWorkspace(t);
    const fresh = await rolodex(t, ['import', '--workspace', other.workspaceId, out]);
    assert.equal(fresh.code, 0, fresh.err);
    for (const secret of [s.secret, other.secret]) {
      const listed = (await call(t, secret, 'GET', '/v1/accounts')).json().data as { fields: { $name: { value: string } } }[];
      assert.deepEqual(
        listed.map((a) => a.fields.$name.value),
        [NAME],
      );
    }
  });

  test('a line holding them is one line: the next is numbered as an editor numbers it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const lines = [
      JSON.stringify({ object: 'account', externalId: 'a-1', fields: { $name: { value: NAME } } }),
      JSON.stringify({ object: 'account', externalId: 'a-2', fields: { $name: { value: 5 } } }),
    ];
    const file = join(t.tdb.dataDir, 'bad.ndjson');
    writeFileSync(file, `${lines.join('\r\n')}\r\n`);
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /^rolodex import: import failed, nothing was written:\nline 2: fields\.\$name\.value: /);
    assert.equal(r.err.split('\n').length, 2, r.err);
  });
});
