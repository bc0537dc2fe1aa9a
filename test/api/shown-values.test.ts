// Values quoted in error messages (docs/import.md §CSV), on both databases. A long value is shown
// by its first 20 and last 10 characters, counted as characters, never cutting one written in two
// UTF-16 units (an emoji): a cut one was a lone surrogate in the API's JSON error, which strict
// JSON readers refuse. And every line of an import's report shows a character that prints nothing
// as its code point, whichever error quotes it (a relationship's externalId that names nothing, a
// header): such characters came out raw, a terminal's escape sequences included.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const FAILED = 'rolodex import: import failed, nothing was written:';
/** A character that prints nothing, but for the line breaks between the report's lines. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

eachDialect('values quoted in error messages', (ctx) => {
  test('a long value is cut between characters, never inside one', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
    const refused = async (label: string): Promise<string> => {
      const res = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A', tier: label } });
      assert.equal(res.statusCode, 400, res.body);
      const message = res.json().error.message as string;
      assert.ok(message.isWellFormed(), JSON.stringify(message));
      return message;
    };
    // The 20th character is an emoji, two UTF-16 units: shown whole.
    const cut = await refused(`${'a'.repeat(19)}😀${'b'.repeat(30)}`);
    assert.equal(cut, `"${'a'.repeat(19)}😀…${'b'.repeat(10)}" is neither an option id nor the label of an option of tier.`);
    // 30 emoji are 30 characters (60 units): whole, as any value of at most 40.
    assert.equal(await refused('😀'.repeat(30)), `"${'😀'.repeat(30)}" is neither an option id nor the label of an option of tier.`);
    const ends = await refused(`${'😀'.repeat(25)}${'x'.repeat(9)}😀${'😀'.repeat(10)}`);
    assert.equal(ends, `"${'😀'.repeat(20)}…${'😀'.repeat(10)}" is neither an option id nor the label of an option of tier.`);
  });

  test("every line of an import's report shows a character that prints nothing as its code point", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = ['--workspace', s.workspaceId];
    const rows = 'externalId,Name,Accounts\nc1,Ann,\u001b[2Ja-1\u2066\nc2,Bo,a\tb\n';
    const csv = await rolodex(t, ['import', ...ws, '--type', 'contact', file(t, 'refs.csv', rows)]);
    assert.equal(csv.code, 1, csv.err);
    assert.equal(
      csv.err,
      [
        FAILED,
        'line 2: Accounts: no account with externalId "\\u{1B}[2Ja-1\\u{2066}" in this import or the workspace',
        'line 3: Accounts: no account with externalId "a\\tb" in this import or the workspace',
      ].join('\n'),
    );
    const header = await rolodex(t, ['import', ...ws, '--type', 'contact', file(t, 'header.csv', 'externalId,Na\u001b[31mme\nc1,Ann\n')]);
    assert.equal(header.code, 1, header.err);
    assert.match(header.err, /^line 1: Na\\u\{1B\}\[31mme: names no field or relationship of contact;/mu);
    const line = JSON.stringify({ object: 'contact', externalId: 'c1', relationships: { $account: { values: ['q\u001b[2J\u200e'] } } });
    const ndjson = await rolodex(t, ['import', ...ws, file(t, 'refs.ndjson', `${line}\n`)]);
    assert.equal(ndjson.code, 1, ndjson.err);
    assert.equal(
      ndjson.err,
      `${FAILED}\nline 1: relationships.$account.values[0]: no account with externalId "q\\u{1B}[2J\\u{200E}" in this import or the workspace`,
    );
    for (const r of [csv, header, ndjson]) for (const l of r.err.split('\n')) assert.doesNotMatch(l, UNSEEN, JSON.stringify(l));
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });
});
