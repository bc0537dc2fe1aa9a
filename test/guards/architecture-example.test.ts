// docs/architecture.md's worked example is read by every new contributor: each file it names
// exists, and each function, type or schema it names in code is found in one of those files, so
// that the example cannot drift from the code it walks through.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const doc = readFileSync('docs/architecture.md', 'utf8');
const start = doc.indexOf('### Worked example');
const section = doc.slice(start, doc.indexOf('\n## ', start));
const spans = [...section.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const files = spans.filter((s) => /^src\/[\w/.-]+\.ts$/.test(s));
// A name in code: an identifier, or `repo.name`, or a call `name(…)` (its arguments aside).
const names = spans
  .filter((s) => !files.includes(s) && !s.includes(' ') && /^[\w.]+(\(.*\))?$/.test(s))
  .map((s) => s.replace(/\(.*$/, '').replace(/^repo\./, ''))
  .filter((s) => /^[A-Za-z_]\w+$/.test(s) && !['ctx', 'param', 'Write', 'idempotent'].includes(s));

test('the worked example names files that exist', () => {
  assert.ok(start >= 0 && files.length >= 5, 'the section and its files are found');
  for (const f of files) assert.ok(existsSync(f), `${f} exists`);
});

test('every name the worked example gives in code is found in the files it names or their repositories', () => {
  const sources = [...files, ...files.map((f) => f.replace(/service\.ts$/, 'repository.ts')).filter(existsSync)].map((f) => readFileSync(f, 'utf8'));
  assert.ok(names.length >= 15, `names found: ${names.join(', ')}`);
  for (const name of names) {
    assert.ok(
      sources.some((text) => new RegExp(`\\b${name}\\b`).test(text)),
      `${name} is in ${files.join(', ')}`,
    );
  }
});

// Each repository call it names is one the service function makes, not merely a function of the
// repository: a call renamed or replaced in updateList shows here.
test('every repository call the worked example names is one updateList makes', () => {
  const service = readFileSync('src/lists/service.ts', 'utf8');
  const from = service.indexOf('export async function updateList(');
  const body = service.slice(from, service.indexOf('\n}\n', from));
  // `repo.findListToChange(…)` and `repo.addMembers` alike.
  const calls = [...new Set([...section.matchAll(/`repo\.(\w+)[(`]/g)].map((m) => m[1]!))];
  assert.ok(from >= 0 && calls.length >= 4, `calls named: ${calls.join(', ')}`);
  for (const call of calls) assert.match(body, new RegExp(`\\brepo\\.${call}\\(`), `updateList calls repo.${call}`);
});
