// The bytes of an import file (docs/import.md §Format): UTF-8 text, a byte order mark skipped in
// every format, and a byte that is not UTF-8 (a file saved as Latin-1 or UTF-16) refused with its
// line, never decoded as U+FFFD and written; characters cut by the reader's chunks arrive whole.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

function file(t: TestApp, name: string, bytes: string | Buffer): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, bytes);
  return path;
}

const account = (id: string, name: string) => JSON.stringify({ object: 'account', externalId: id, fields: { $name: { value: name } } });
const latin1 = (text: string) => Buffer.from(text, 'latin1');
const FAILED = 'rolodex import: import failed, nothing was written:';
const CONVERT = 'save the file as UTF-8, e.g. with iconv -f WINDOWS-1252 -t UTF-8';

async function names(t: TestApp, secret: string): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; ; offset += 25) {
    const page = (await call(t, secret, 'GET', `/v1/accounts?limit=25&offset=${offset}`)).json();
    out.push(...(page.data as { fields: { $name: { value: string } } }[]).map((a) => a.fields.$name.value));
    if (offset + 25 >= page.totalCount) return out.sort();
  }
}

eachDialect('rolodex import of bytes that are not UTF-8', (ctx) => {
  test('NDJSON and JSON: a Latin-1 byte is refused with its line, with the other bad lines; a BOM is skipped', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const bad = latin1([account('a-1', 'Acme'), '{"object":"account", oops', account('a-2', 'Café'), account('a-3', 'Zed')].join('\n'));
    const r1 = await rolodex(t, ['import', '--workspace', ws, file(t, 'latin1.ndjson', bad)]);
    assert.equal(r1.code, 1, r1.err);
    const [head, json, bytes] = r1.err.split('\n');
    assert.equal(head, FAILED);
    assert.match(json ?? '', /^line 2: \(line\): not valid JSON: /);
    assert.equal(bytes, `line 3: (line): is not UTF-8 text (byte 0xE9, byte 71 of the line): ${CONVERT}`);
    const array = latin1(`[${account('a-1', 'Acme')},\n${account('a-2', 'Café')}]`);
    const r2 = await rolodex(t, ['import', '--workspace', ws, file(t, 'latin1.json', array)]);
    assert.equal(r2.err, `${FAILED}\nline 0: (file): is not UTF-8 text (byte 0xE9 on line 2, byte 71 of it): ${CONVERT}`);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(account('a-1', 'Acme'), 'utf16le')]);
    const r3 = await rolodex(t, ['import', '--workspace', ws, file(t, 'utf16.ndjson', utf16)]);
    assert.equal(r3.err, `${FAILED}\nline 1: (line): is UTF-16 text, not UTF-8: save the file as UTF-8, e.g. with iconv -f UTF-16 -t UTF-8`);
    assert.deepEqual(await names(t, s.secret), [], 'nothing is written');

    // The same objects as UTF-8 with a byte order mark, CRLF and a blank last line; as a JSON array too.
    const good = `\ufeff${account('a-1', 'Acme')}\r\n${account('a-2', 'Café')}\r\n\r\n`;
    const r4 = await rolodex(t, ['import', '--workspace', ws, file(t, 'good.ndjson', good)]);
    assert.equal(r4.code, 0, r4.err);
    const r5 = await rolodex(t, ['import', '--workspace', ws, file(t, 'good.json', `\ufeff[${account('a-3', 'Zoë')}]`)]);
    assert.equal(r5.code, 0, r5.err);
    assert.deepEqual(await names(t, s.secret), ['Acme', 'Café', 'Zoë']);
  });

  test('CSV: a Latin-1 byte is refused with its line after the rows before it; characters across chunks arrive whole', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const bad = latin1('externalId,Name\na-1,Acme,extra\na-2,"Caf\u00e9\nM\u00fcller"\na-3,Zed\n');
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'latin1.csv', bad)]);
    assert.equal(
      r1.err,
      [FAILED, 'line 2: (row): has 3 cells, the header 2', `line 3: (row): is not UTF-8 text (byte 0xE9, byte 9 of the line): ${CONVERT}`].join('\n'),
    );
    assert.deepEqual(await names(t, s.secret), [], 'nothing is written');

    // 2,000 rows of two-, three- and four-byte characters, shifted until the end of the file's
    // first chunk of 64 KiB cuts one.
    const rows = (pad: string) => {
      const names = Array.from({ length: 2000 }, (_, i) => `${i === 0 ? pad : ''}Müller ${'日本'.repeat(1 + (i % 5))} 🎉 ${i}`);
      return { names, text: ['\ufeffexternalId,Name', ...names.map((n, i) => `a-${i},"${n}"`)].join('\r\n') };
    };
    let pad = '';
    while (((Buffer.from(rows(pad).text)[65536] as number) & 0xc0) !== 0x80) pad += 'x';
    const { names: expected, text } = rows(pad);
    const r2 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'good.csv', text)]);
    assert.equal(r2.code, 0, r2.err);
    assert.deepEqual(await names(t, s.secret), expected.sort());
  });

  test('lines ended by a lone \\r, as Excel for Mac saves CSV, are counted as the readers count them', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    // Line 2 has a cell too many; a-2's quoted cell holds a `\r\n` (lines 3-4); é is on line 5.
    const csv = latin1('externalId,Name\ra-1,Acme,extra\ra-2,"Zed\r\nCo"\ra-3,Caf\u00e9\r');
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'mac.csv', csv)]);
    assert.equal(
      r1.err,
      [FAILED, 'line 2: (row): has 3 cells, the header 2', `line 5: (row): is not UTF-8 text (byte 0xE9, byte 8 of the line): ${CONVERT}`].join('\n'),
    );
    const ndjson = latin1([account('a-1', 'Acme'), '{"object":"account", oops', account('a-2', 'Café')].join('\r'));
    const r2 = await rolodex(t, ['import', '--workspace', ws, file(t, 'mac.ndjson', ndjson)]);
    const [head, json, bytes] = r2.err.split('\n');
    assert.equal(head, FAILED);
    assert.match(json ?? '', /^line 2: \(line\): not valid JSON: /);
    assert.equal(bytes, `line 3: (line): is not UTF-8 text (byte 0xE9, byte 71 of the line): ${CONVERT}`);
    assert.deepEqual(await names(t, s.secret), [], 'nothing is written');
  });
});

eachDialect('rolodex import of text no database stores as sent', (ctx) => {
  test('a NUL or half of a surrogate pair in a string or key is refused with its line and place, nothing written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const ndjson = [
      account('a-1', 'Acme'),
      '{"object":"account","externalId":"a-2","fields":{"$name":{"value":"A\\ud800B"}}}',
      '{"object":"list","externalId":"l-1","name":"Hot \\udc00","objectType":"account","members":["a-1"]}',
      '{"object":"account","externalId":"a-3","fields":{"$name":{"value":"nul\\u0000x"}}}',
      '{"object":"account","externalId":"a-4","fields":{"\\ud83d":{"value":"x"}}}',
    ].join('\n');
    const lone = 'contains half of a surrogate pair (a \\uD800-\\uDFFF escape without its other half), which UTF-8 text cannot hold';
    const r1 = await rolodex(t, ['import', '--workspace', ws, file(t, 'escapes.ndjson', ndjson)]);
    assert.equal(r1.code, 1, r1.err);
    assert.equal(
      r1.err,
      [
        FAILED,
        `line 2: fields.$name.value: ${lone}`,
        `line 3: name: ${lone}`,
        'line 4: fields.$name.value: contains a NUL character',
        `line 5: fields.\ud83d: ${lone}`,
      ].join('\n'),
    );
    const r2 = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      file(t, 'escapes.json', `[${account('a-1', 'Acme')},{"object":"list","externalId":"l-1","name":"Hot","objectType":"account","members":["a-1\\ud800"]}]`),
    ]);
    assert.equal(r2.err, `${FAILED}\nline 2: members[0]: ${lone}`);
    // A CSV file holds no escapes, but a NUL byte is UTF-8: refused with its row and column.
    const r3 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'nul.csv', 'externalId,Name\na-1,Acme\na-2,"Ac\u0000me"\n')]);
    assert.equal(r3.err, `${FAILED}\nline 3: Name: contains a NUL character`);
    assert.deepEqual(await names(t, s.secret), [], 'nothing is written');
    const lists = (await call(t, s.secret, 'GET', '/v1/lists')).json();
    assert.equal(lists.data.length, 0);
  });
});
