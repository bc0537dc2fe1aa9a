// An import line nested deeper than a request body may be (docs/import.md §Format, docs/errors.md):
// refused with its line, with the file's other bad lines, never a crash of the whole import with a
// stack overflow; nothing is written.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAX_JSON_DEPTH } from '../../src/lib/json-depth.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const DEEP = 200_000;
const NESTS = `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`;
const TOO_DEEP = `(line): ${NESTS}`;
const account = (id: string, fields: string) => `{"object":"account","externalId":"${id}","fields":${fields}}`;

eachDialect('rolodex import of deeply nested lines', (ctx) => {
  test('NDJSON and a JSON array: a line nested too deep is refused at its line, nothing written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const file = join(t.tdb.dataDir, 'deep.ndjson');
    const lines = [
      account('a-1', '{"$name":{"value":"Acme"}}'),
      account('a-2', `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`),
      // A number no double holds is parsed by a reviver, which recurses too.
      account('a-3', `{"n":12345678901234567890123,"x":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`),
      account('a-4', `${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}`),
    ];
    writeFileSync(file, lines.join('\n'));
    const r1 = await rolodex(t, ['import', '--workspace', s.workspaceId, file]);
    assert.equal(r1.code, 1);
    assert.equal(
      r1.err,
      ['rolodex import: import failed, nothing was written:', `line 2: ${TOO_DEEP}`, `line 3: ${TOO_DEEP}`, `line 4: ${TOO_DEEP}`].join('\n'),
    );
    writeFileSync(file, `[${lines[0]},\n${lines[1]}]`);
    const r2 = await rolodex(t, ['import', '--workspace', s.workspaceId, file]);
    assert.equal(r2.err, ['rolodex import: import failed, nothing was written:', `line 2: ${TOO_DEEP}`].join('\n'));
    // A JSON array holding a number no double holds is parsed whole by the reviver, which overflows.
    writeFileSync(file, `[${lines[0]},\n${lines[2]}]`);
    const r3 = await rolodex(t, ['import', '--workspace', s.workspaceId, file]);
    assert.equal(r3.err, ['rolodex import: import failed, nothing was written:', `line 0: (file): an item ${NESTS}`].join('\n'));
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });
});
