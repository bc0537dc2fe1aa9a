// Every code the server can throw is documented in docs/errors.md, with its status, and the page
// lists no code the server does not have.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ERROR_CODES } from '../../src/lib/errors.ts';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map<string, number>();
for (const m of doc.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/gm)) rows.set(m[1] as string, Number(m[2]));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('every declared error code is documented with its status', () => {
  for (const [code, status] of Object.entries(ERROR_CODES)) {
    assert.ok(rows.has(code), `docs/errors.md does not document "${code}"`);
    assert.equal(rows.get(code), status, `docs/errors.md gives "${code}" another status`);
  }
});

test('docs/errors.md lists no code the server does not declare', () => {
  for (const code of rows.keys()) assert.ok(code in ERROR_CODES, `docs/errors.md documents unknown code "${code}"`);
});

test('every code thrown in the source is declared (and therefore documented)', () => {
  const thrown = new Set<string>();
  for (const file of sourceFiles(new URL('../../src', import.meta.url).pathname)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/new AppError\(\s*'([a-z_]+)'/g)) thrown.add(m[1] as string);
  }
  assert.ok(thrown.size >= 10, `found only ${thrown.size} thrown codes; is the scan broken?`);
  for (const code of thrown) assert.ok(code in ERROR_CODES, `"${code}" is thrown but not declared`);
});

test("a required property absent is parameter_missing, the original's code; missing_field is retired", () => {
  assert.equal(ERROR_CODES.parameter_missing, 400);
  assert.ok(!('missing_field' in ERROR_CODES));
  assert.ok(!doc.includes('missing_field'), 'docs/errors.md still names missing_field');
  assert.equal(ERROR_CODES.relationship_entity_inactive, 400);
});
