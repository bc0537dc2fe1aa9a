// Files an operator moving from another CRM gives `rolodex import` (docs/import.md §Format, §CSV):
// a workbook, an archive or other binary data is refused in one line saying what it is and what
// to do; a CSV file without a header is refused; a header cell that names nothing is shown by its
// ends; a number cell formatted by a spreadsheet names what to remove; Excel's `sep=,` line is
// skipped. Nothing is written by a refused file.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

function file(t: TestApp, name: string, bytes: string | Buffer): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, bytes);
  return path;
}

const FAILED = 'rolodex import: import failed, nothing was written:';
const SAVE_AS = 'export the sheet as "CSV UTF-8" from the spreadsheet, or the records as NDJSON';
const REVENUE = JSON.stringify({ object: 'definition', definition: 'field', objectType: 'account', key: 'revenue', label: 'Revenue', valueType: 'NUMBER' });

/** The first bytes of a ZIP archive (an .xlsx workbook), then a local header's binary fields. */
const XLSX = Buffer.concat([
  Buffer.from('PK\x03\x04\x14\x00\x06\x00\x08\x00', 'latin1'),
  Buffer.from([0x85, 0xc6, 0xf0, 0xdd, 0x83]),
  Buffer.from('[Content_Types].xml'),
]);
const XLS = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n%'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3]), Buffer.from('\n1 0 obj\n')]);

eachDialect('rolodex import of files that are not CSV', (ctx) => {
  test('a workbook, an archive, a PDF or binary data is refused in one line saying what it is; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const cases: Array<[string, Buffer, string]> = [
      ['people.xlsx', XLSX, `is a ZIP archive (as an .xlsx, .ods or .numbers workbook is), not text: ${SAVE_AS}`],
      ['people.xls', XLS, `is an Excel 97-2003 workbook (.xls) or another OLE document, not text: ${SAVE_AS}`],
      ['people.csv.gz', gzipSync('externalId,Name\na-1,Acme\n'), 'is gzip-compressed, not text: decompress it first, e.g. rolodex import … <(zcat FILE)'],
      ['people.pdf', PDF, `is a PDF document, not text: ${SAVE_AS}`],
      ['people.bin', Buffer.from([0, 1, 2, 3, 9, 44, 0, 0, 10, 0x80, 0xff]), `holds NUL bytes, as binary data or UTF-16 text does, not UTF-8 text: ${SAVE_AS}`],
    ];
    for (const [name, bytes, error] of cases) {
      const csv = await rolodex(t, ['import', '--workspace', ws, '--format', 'csv', '--type', 'account', file(t, name, bytes)]);
      assert.equal(csv.code, 1, csv.err);
      assert.equal(csv.err, `${FAILED}\nline 1: (file): ${error}`, name);
      const ndjson = await rolodex(t, ['import', '--workspace', ws, file(t, name, bytes)]);
      assert.equal(ndjson.code, 1, ndjson.err);
      assert.equal(ndjson.err, `${FAILED}\nline 1: (file): ${error}`, name);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });

  test('a CSV file without a header is refused; a header alone imports nothing', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const noHeader = `${FAILED}\nline 1: (header): the file holds no header: a CSV file starts with a header naming its columns, externalId among them`;
    for (const [name, text] of [
      ['empty.csv', ''],
      ['bom.csv', '\ufeff'],
      ['lines.csv', '\r\n\n\r'],
      ['sep.csv', 'sep=,\r\n'],
    ]) {
      const r = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, name as string, text as string)]);
      assert.equal(r.code, 1, `${name}: ${r.err}`);
      assert.equal(r.err, noHeader, name);
    }
    const header = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'header.csv', 'externalId,Name\r\n\r\n')]);
    assert.equal(header.code, 0, header.err);
    assert.match(header.out, /^imported nothing in /);
  });

  test("a header cell naming nothing is shown by its ends, a member's name too", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const long = `${'x'.repeat(50_000)}yz`;
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'long.csv', `externalId,${long}\na-1,A\n`)]);
    assert.equal(r1.code, 1, r1.err);
    assert.match(r1.err, /^line 1: x{20}…x{8}yz: names no field or relationship of account; fields: \$name \(Name\), /m);
    assert.ok(r1.err.length < 2_000, `${r1.err.length} characters`);
    const r2 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'member.csv', `externalId,Primary address.${long}\na-1,A\n`)]);
    assert.equal(r2.code, 1, r2.err);
    assert.equal(
      r2.err,
      `${FAILED}\nline 1: Primary address.xxxx…xxxxxxxxyz: $primaryAddress (ADDRESS) has no member "${'x'.repeat(20)}…${'x'.repeat(8)}yz"; ` +
        'its members: street, street2, city, state, postalCode, country, latitude, longitude',
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });

  test('a number cell with a currency sign or thousands separators names them; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    assert.equal((await rolodex(t, ['import', '--workspace', ws, file(t, 'defs.ndjson', REVENUE)])).code, 0);
    const rows = 'externalId,Name,Revenue\na-1,A,"$1,000.00"\na-2,B,€100\na-3,C,100 €\na-4,D,"1.234,56"\na-5,E,"1,5"\na-6,F,12\n';
    const r = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'money.csv', rows)]);
    assert.equal(r.code, 1, r.err);
    const number = 'is not a number: write it in decimal digits, with "." before a fraction';
    assert.equal(
      r.err,
      [
        FAILED,
        `line 2: Revenue: "$1,000.00" ${number}, without a currency sign or thousands separators`,
        `line 3: Revenue: "€100" ${number}, without a currency sign`,
        `line 4: Revenue: "100 €" ${number}, without a currency sign`,
        `line 5: Revenue: "1.234,56" ${number}, without thousands separators`,
        `line 6: Revenue: "1,5" ${number}`,
      ].join('\n'),
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });

  test("Excel's sep=, line before the header is skipped; a sep=; line names the separator", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const r1 = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      '--type',
      'account',
      file(t, 'sep.csv', '\ufeffsep=,\r\nexternalId,Name\r\na-1,Acme\r\na-2,\r\n'),
      '--json',
    ]);
    assert.equal(r1.code, 0, r1.err);
    assert.deepEqual(JSON.parse(r1.out).counts, { account: 2 });
    const bad = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'bad.csv', 'sep=,\nexternalId,Name\na-3,B,x\n')]);
    assert.equal(bad.err, `${FAILED}\nline 3: (row): has 3 cells, the header 2`);
    const semi = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'semi.csv', 'sep=;\nexternalId;Name\na-3;B\n')]);
    assert.equal(semi.err, `${FAILED}\nline 1: (header): separates its names with ";": the cells of a CSV file are separated by commas`);
    const names = (await call(t, s.secret, 'GET', '/v1/accounts')).json().data.map((a: { externalId: string }) => a.externalId);
    assert.deepEqual(names.toSorted(), ['a-1', 'a-2']);
  });

  test('the header repeated among the rows (two files joined) is refused, not written as a record', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const joined = 'externalId,Name\r\na-1,Acme\r\n\ufeffexternalId, name \r\na-2,Beta\r\n';
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'joined.csv', joined)]);
    assert.equal(r1.code, 1, r1.err);
    assert.equal(
      r1.err,
      `${FAILED}\nline 3: (row): repeats the header: a file has one header, so remove this row (files joined one after the other keep the first header only)`,
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });

  test('a full name written "Last, First" is read as such, a last name of several words too; "First Last" and a suffix after a comma keep the split at the first space', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const rows =
      'External ID,Name\nc-1,"Lee, Ann Marie"\nc-2,"Lee,Ann"\nc-3,Ann Lee\nc-4,"John Smith, Jr."\nc-5,"Lee,"\nc-6,"van der Berg, Jan"\nc-7,"Ann Lee, PhD"\n';
    const r = await rolodex(t, ['import', '--workspace', ws, '--type', 'contact', file(t, 'names.csv', rows), '--json']);
    assert.equal(r.code, 0, r.err);
    const ids = JSON.parse(r.out).ids.contact as Record<string, string>;
    const name = async (id: string) => (await call(t, s.secret, 'GET', `/v1/contacts/${ids[id]}`)).json().fields.$name.value;
    assert.deepEqual(await name('c-1'), { firstName: 'Ann Marie', lastName: 'Lee' });
    assert.deepEqual(await name('c-2'), { firstName: 'Ann', lastName: 'Lee' });
    assert.deepEqual(await name('c-3'), { firstName: 'Ann', lastName: 'Lee' });
    assert.deepEqual(await name('c-4'), { firstName: 'John', lastName: 'Smith, Jr.' });
    assert.deepEqual(await name('c-5'), { firstName: 'Lee,' });
    assert.deepEqual(await name('c-6'), { firstName: 'Jan', lastName: 'van der Berg' });
    assert.deepEqual(await name('c-7'), { firstName: 'Ann', lastName: 'Lee, PhD' });
  });
});
