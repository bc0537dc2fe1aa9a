// docs/errors.md and the source agree on the codes the server emits, both ways: every code the
// source raises has a row on the page, and every row names a code some path of the source raises,
// so that an integrator never programs against a code that cannot come. A code is raised where
// `new AppError(` takes it as a literal, or takes a variable `code` whose value is a literal or a
// branch of a conditional (`const code = kind === 'u' ? 'invalid_upload_token' : 'invalid_download_token'`).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The codes `text` raises through `new AppError(…)`. */
export function raisedCodes(text: string): Set<string> {
  const codes = new Set<string>();
  for (const m of text.matchAll(/new AppError\(\s*'([a-z_]+)'/g)) codes.add(m[1] as string);
  if (/new AppError\(\s*code\b/.test(text))
    for (const m of text.matchAll(/\bconst code\b[^=]*=([^;]+);/g))
      for (const lit of (m[1] as string).matchAll(/(?:^|[?:])\s*'([a-z_]+)'/g)) codes.add(lit[1] as string);
  return codes;
}

/** The codes of the tables of docs/errors.md: rows whose first cell is a code and second a status. */
export function documentedCodes(page: string): Set<string> {
  return new Set([...page.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*\d{3}\s*\|/gm)].map((m) => m[1] as string));
}

const doc = documentedCodes(readFileSync(join(root, 'docs/errors.md'), 'utf8'));
const raised = new Set(sourceFiles(join(root, 'src')).flatMap((file) => [...raisedCodes(readFileSync(file, 'utf8'))]));

test('the scan finds what it looks for', () => {
  assert.ok(doc.size >= 40, `docs/errors.md: only ${doc.size} rows found`);
  assert.ok(raised.size >= 40, `src: only ${raised.size} raised codes found`);
  // Both forms of raising are read, and a code that is only declared or documented is not raised.
  const sample = raisedCodes(
    "throw new AppError(\n 'file_busy', 'm');\nconst code = kind === 'u' ? 'invalid_upload_token' : 'invalid_download_token';\nthrow new AppError(code, 'm');\nconst ERRORS = ['duplicate_value'];",
  );
  assert.deepEqual([...sample].sort(), ['file_busy', 'invalid_download_token', 'invalid_upload_token']);
  assert.deepEqual([...documentedCodes('| `a_code` | 409 | when |\n| `not_a_row` | x |')], ['a_code']);
});

test('every code the source raises is a row of docs/errors.md', () => {
  const missing = [...raised].filter((c) => !doc.has(c));
  assert.deepEqual(missing, [], `raised in src/ but not documented in docs/errors.md: ${missing.join(', ')}`);
});

test('every code docs/errors.md lists is raised somewhere in the source', () => {
  const never = [...doc].filter((c) => !raised.has(c));
  assert.deepEqual(never, [], `documented in docs/errors.md but raised nowhere in src/: ${never.join(', ')}`);
});
