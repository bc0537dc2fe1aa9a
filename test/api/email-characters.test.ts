// E-mail addresses hold no control or invisible character (docs/records.md §E-mail addresses), on
// both databases and on every write path: a create, an update, a merge's resolution, an MCP tool,
// an NDJSON line and a CSV cell are refused naming the value's place and the character; nothing
// is written. A filter holding one answers as for any other text no address holds: nothing.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { callTool } from '../helpers/mcp.ts';

/** Addresses that read as `ann@acme.test` and the character each holds. */
const BAD: Array<[string, string]> = [
  ['ann\u0001x@acme.test', 'U+0001'],
  ['ann\u0007@acme.test', 'U+0007'],
  ['ann\u007f@acme.test', 'U+007F'],
  ['ann\u0085@acme.test', 'U+0085'],
  ['ann@\u200bacme.test', 'U+200B'],
  ['an\u200cn@acme.test', 'U+200C'],
  ['an\u200dn@acme.test', 'U+200D'],
  ['\u200eann@acme.test', 'U+200E'],
  ['ann@acme.test\u200f', 'U+200F'],
  ['\u202bann@acme.test\u202c', 'U+202B'],
  ['\u2066ann@acme.test\u2069', 'U+2066'],
  ['ann\u2060@acme.test', 'U+2060'],
  ['\ufeffann@acme.test', 'U+FEFF'],
  ['an\u00adn@acme.test', 'U+00AD'],
];
const WHY = (c: string) => `must be an email address without control or invisible characters (it holds ${c})`;

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

eachDialect('control and invisible characters in e-mail addresses', (ctx) => {
  async function refused(s: Seeded, method: 'POST' | 'PATCH', url: string, body: unknown, param: string, c: string) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
    const { code, param: p, message } = res.json().error;
    assert.deepEqual([code, p], ['invalid_value', param], message);
    assert.ok(message.includes(WHY(c)), message);
  }

  test('a create, an update and a merge resolution refuse them; the records keep their values', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'contact', key: 'work', label: 'Work', valueType: 'EMAIL' });
    const a = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['ann@acme.test'], work: 'ann@acme.test' } })).json();
    const b = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['bo@acme.test'] } })).json();
    for (const [address, c] of BAD) {
      await refused(s, 'POST', '/v1/contacts', { fields: { $email: ['bo@acme.test', address] } }, 'fields.$email[1]', c);
      await refused(s, 'POST', '/v1/contacts', { fields: { work: address } }, 'fields.work', c);
      await refused(s, 'POST', `/v1/contacts/${a.id}`, { fields: { $email: address } }, 'fields.$email', c);
      await refused(
        s,
        'POST',
        '/v1/contacts/merge',
        { primaryId: a.id, duplicateId: b.id, fieldResolutions: { work: { value: address } } },
        'fieldResolutions.work',
        c,
      );
    }
    const now = (await call(t, s.secret, 'GET', `/v1/contacts/${a.id}`)).json();
    assert.deepEqual([now.fields.$email.value, now.fields.work.value, now.updatedAt], [['ann@acme.test'], 'ann@acme.test', a.updatedAt]);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 2, 'nothing created, nothing merged');
    // Visible characters outside ASCII stay addresses, as written.
    const ok = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['jürgen@bücher.example', 'ann+tag@acme.test'] } });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('an MCP tool gets the REST refusal', async () => {
    const t = ctx();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const s = await seedWorkspace(t);
    for (const [address, c] of BAD.slice(3, 8)) {
      const got = await callTool(t, s.secret, 'write_to_rolodex', { path: '/v1/contacts', body: { fields: { $email: [address] } } });
      assert.equal(got.isError, true, JSON.stringify(got.body));
      assert.deepEqual([got.body.error.code, got.body.error.param], ['invalid_value', 'fields.$email[0]']);
      assert.ok(got.body.error.message.includes(WHY(c)), got.body.error.message);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });

  test('an NDJSON line and a CSV cell holding one fail the import naming the line and place; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const contact = (externalId: string, address: string) =>
      JSON.stringify({ object: 'contact', externalId, fields: { $email: { value: ['bo@acme.test', address], valueType: 'EMAIL' } } });
    const nd = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      file(t, 'bad.ndjson', [contact('c1', 'ann@acme.test'), contact('c2', 'ann@\u200bacme.test')].join('\n')),
    ]);
    assert.equal(nd.code, 1, nd.err);
    assert.match(nd.err, /^line 2: fields\.\$email\.value\[1\]: .*must be an email address without control or invisible characters \(it holds U\+200B\)/mu);
    const csv = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      '--type',
      'contact',
      file(t, 'bad.csv', 'externalId,Name,Email\nc1,Ann,ann@acme.test\nc2,Bo,bo@acme.test;\u2066bo@b.test\u2069\n'),
    ]);
    assert.equal(csv.code, 1, csv.err);
    // The cell's piece is quoted with its invisible characters written as code points (docs/import.md §CSV).
    assert.match(
      csv.err,
      /^line 3: Email: "\\u\{2066\}bo@b\.test\\u\{2069\}" must be an email address without control or invisible characters \(it holds U\+2066\)/mu,
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });

  test('a filter holding one answers nothing, as for any other text no address holds', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ann = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['ann@acme.test'] } })).json();
    const ids = async (needle: string) => {
      const res = await call(t, s.secret, 'GET', `/v1/contacts?${encodeURIComponent('$email[contains]')}=${encodeURIComponent(needle)}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.map((d: { id: string }) => d.id);
    };
    assert.deepEqual(await ids('ann@acme'), [ann.id]);
    for (const [address] of BAD.slice(1)) assert.deepEqual(await ids(address), [], JSON.stringify(address));
    assert.deepEqual(await ids('ann@acme.zz'), []);
  });
});
