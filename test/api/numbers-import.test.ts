// Numbers at their limits in `rolodex import`, on both databases (docs/import.md §Value types,
// §CSV; docs/errors.md §Numbers in bodies): an NDJSON line, a JSON array item or a CSV cell holding
// an integer that no double is fails the import with its line and place, as the API refuses it,
// where JSON.parse and Number made it another number and stored that one; what the API answers
// imports unchanged.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

const FIELDS = ['n:NUMBER', 'cur:CURRENCY']
  .map((f) => f.split(':') as [string, string])
  .map(([key, valueType]) =>
    JSON.stringify({ object: 'definition', externalId: `d-${key}`, definition: 'field', objectType: 'account', key, label: key.toUpperCase(), valueType }),
  )
  .join('\n');
const FAILED = 'rolodex import: import failed, nothing was written:';
const account = (externalId: string, n: string) =>
  `{"object":"account","externalId":"${externalId}","fields":{"$name":{"value":"${externalId}"},"n":{"value":${n},"valueType":"NUMBER"}}}`;

eachDialect('numbers in rolodex import', (ctx) => {
  test('an NDJSON line or JSON array item with an integer no double is, or a number beyond its range, fails naming the line and place', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    assert.equal((await rolodex(t, ['import', '--workspace', ws, file(t, 'defs.ndjson', FIELDS)])).code, 0);
    const lines = [account('a-1', '5'), account('a-2', '12345678901234567890'), account('a-3', '-9007199254740993'), account('a-4', '1e400')];
    const why = (literal: string, reads: string) =>
      `${literal} is an integer beyond ±9007199254740991 that a number here (an IEEE 754 double) does not hold: it reads as ${reads}`;
    const range = '1e400 is beyond the range of a number here (an IEEE 754 double, at most ±1.7976931348623157e+308)';
    const expected = [
      FAILED,
      `line 2: fields.n.value: ${why('12345678901234567890', '12345678901234567000')}`,
      `line 3: fields.n.value: ${why('-9007199254740993', '-9007199254740992')}`,
      `line 4: fields.n.value: ${range}`,
    ].join('\n');
    const ndjson = await rolodex(t, ['import', '--workspace', ws, file(t, 'bad.ndjson', lines.join('\n'))]);
    assert.equal(ndjson.code, 1, ndjson.err);
    assert.equal(ndjson.err, expected);
    const array = await rolodex(t, ['import', '--workspace', ws, file(t, 'bad.json', `[${lines.join(',\n')}]`)]);
    assert.equal(array.code, 1, array.err);
    assert.equal(array.err, expected);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);

    // What the API answers for a double of that size imports as it is answered.
    const good = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      file(t, 'good.ndjson', [account('a-1', '12345678901234567000'), account('a-2', '9007199254740992')].join('\n')),
      '--json',
    ]);
    assert.equal(good.code, 0, good.err);
    const ids = JSON.parse(good.out).ids.account as Record<string, string>;
    const body = (await call(t, s.secret, 'GET', `/v1/accounts/${ids['a-1']}`)).body;
    assert.ok(body.includes('"n":{"value":12345678901234567000,'), body);
    assert.equal((await call(t, s.secret, 'GET', `/v1/accounts/${ids['a-2']}`)).json().fields.n.value, 9007199254740992);
  });

  test('a CSV cell with an integer no double is, or a number beyond its range, fails naming the line, column and why; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    assert.equal((await rolodex(t, ['import', '--workspace', ws, file(t, 'defs.ndjson', FIELDS)])).code, 0);
    const bad = 'externalId,Name,N,CUR\na-1,A,12345678901234567890,1\na-2,B,2,+09007199254740993\na-3,C,3,4\na-4,D,-1e400,5\n';
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'bad.csv', bad)]);
    assert.equal(r1.code, 1, r1.err);
    const why = 'is an integer beyond ±9007199254740991 that a number here (an IEEE 754 double) does not hold: it reads as';
    const range = 'is beyond the range of a number here (an IEEE 754 double, at most ±1.7976931348623157e+308)';
    assert.equal(
      r1.err,
      [
        FAILED,
        `line 2: N: "12345678901234567890" ${why} 12345678901234567000`,
        `line 3: CUR: "+09007199254740993" ${why} 9007199254740992`,
        `line 5: N: "-1e400" ${range}`,
      ].join('\n'),
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);

    const good = 'externalId,Name,N,CUR\na-1,A,12345678901234567000,+09007199254740992\n';
    const r2 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'good.csv', good), '--json']);
    assert.equal(r2.code, 0, r2.err);
    const id = (JSON.parse(r2.out).ids.account as Record<string, string>)['a-1'];
    const fields = (await call(t, s.secret, 'GET', `/v1/accounts/${id}`)).json().fields;
    assert.deepEqual([fields.n.value, fields.cur.value], [12345678901234567000, 9007199254740992]);
  });
});
