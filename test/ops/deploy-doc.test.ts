// docs/deploy.md's configuration table names every environment variable src/config.ts reads, and
// nothing else: an operator deploying from that page alone sees every setting.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

test('docs/deploy.md lists exactly the variables of src/config.ts', () => {
  const source = read('src/config.ts');
  const inCode = new Set([...source.matchAll(/env(?:\.|, ')([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!));
  assert.ok(inCode.has('PORT') && inCode.has('SMTP_URL') && inCode.has('VERSION_HEADERS'), [...inCode].join(' '));
  const doc = read('docs/deploy.md');
  const table = doc.slice(doc.indexOf('## Configuration'), doc.indexOf('\n## ', doc.indexOf('## Configuration') + 1));
  const lines = table.split('\n');
  const named = lines.filter((l) => l.startsWith('| `')).flatMap((l) => [...l.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
  const inDoc = new Set(named);
  // One table, each variable in one row: a second header row inside the table renders as a row of
  // the first, and a variable described twice may be described two ways.
  assert.equal(lines.filter((l) => /^\| variable /.test(l)).length, 1, 'the configuration is one table');
  assert.deepEqual(
    named.filter((v, i) => named.indexOf(v) !== i),
    [],
    'variables in more than one row',
  );
  assert.deepEqual([...inCode].filter((v) => !inDoc.has(v)).sort(), [], 'read by src/config.ts but missing from docs/deploy.md');
  assert.deepEqual([...inDoc].filter((v) => !inCode.has(v)).sort(), [], 'in docs/deploy.md but not read by src/config.ts');
});
