// The CLI's error lines on stderr quote text from an import file, the database or an argument with
// every character a terminal acts on escaped, as its code point (docs/cli.md): a label or a name
// holding ESC sequences, C1's CSI or a bidirectional override cannot clear the operator's screen
// or rewrite what was printed, and a line break inside it cannot forge a line of the report. An
// option's label imported from a file, a workspace id and a file name came out raw.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const BAD = 'Gold\u001b[2J\u202eX\u009b31m\nline 9: forged';
const SHOWN = 'Gold\\u{1B}[2J\\u{202E}X\\u{9B}31m\\nline 9: forged';
// What a terminal would act on: C0 (a line break included), DEL, C1 and the bidirectional controls.
const ACTS = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

/** A refusal, exit code 1, in `lines` lines of stderr, none holding what a terminal acts on. */
async function refused(t: TestApp, args: string[], lines = 1): Promise<string> {
  const r = await rolodex(t, args);
  assert.equal(r.code, 1, `${args.join(' ')}: ${r.err}`);
  const said = r.err.split('\n');
  assert.equal(said.length, lines, JSON.stringify(r.err));
  for (const line of said) assert.doesNotMatch(line, ACTS, JSON.stringify(line));
  return r.err;
}

eachDialect('CLI error lines and control characters', (ctx) => {
  test('an error line shows what a terminal acts on escaped, whether the text came from a file, the database or an argument', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = ['--workspace', s.workspaceId];
    const defs = [
      {
        object: 'definition',
        externalId: 'd-tier',
        definition: 'field',
        objectType: 'account',
        key: 'tier',
        label: BAD,
        valueType: 'SINGLE_SELECT',
        options: [BAD],
      },
    ];
    const imported = await rolodex(t, ['import', ...ws, file(t, 'defs.ndjson', defs.map((d) => JSON.stringify(d)).join('\n'))]);
    assert.equal(imported.code, 0, imported.err);

    // The option's label as the import file wrote it, read back from the database.
    const add = ['definition', 'option', 'add', ...ws, '--type', 'account', '--field', 'tier', '--label'];
    assert.equal(
      await refused(t, [...add, BAD.replace('Gold', 'GOLD')]),
      `rolodex definition: "${SHOWN.replace('Gold', 'GOLD')}" differs from option "${SHOWN}" only in case or white space: a label names one option`,
    );
    assert.equal(await refused(t, [...add, BAD]), `rolodex definition: option "${SHOWN}" exists`);

    // A bad cell of an import file: the report's head, then one line per bad row.
    const csv = file(t, 'accounts.csv', `externalId,Name,tier\na1,Acme,"x${BAD}"\na2,Globex,${SHOWN.length}\n`);
    const report = await refused(t, ['import', ...ws, '--type', 'account', csv], 3);
    assert.equal(report.split('\n')[0], 'rolodex import: import failed, nothing was written:');
    assert.ok(report.split('\n')[1]?.startsWith(`line 2: tier: "x${SHOWN}" is not an option of ${SHOWN}; valid labels: ${SHOWN}`), report);

    // Arguments: a workspace id, a file's name.
    assert.equal(await refused(t, ['user', 'list', '--workspace', BAD]), `rolodex user: no workspace with id "${SHOWN}"`);
    const missing = join(t.tdb.dataDir, BAD);
    assert.match(
      await refused(t, ['import', ...ws, missing]),
      /^rolodex import: cannot read .*Gold\\u\{1B\}\[2J\\u\{202E\}X\\u\{9B\}31m\\nline 9: forged: ENOENT/u,
    );
  });
});
