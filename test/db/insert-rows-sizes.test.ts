// Multi-row inserts in statements of a few row counts only (src/db/insert-rows.ts, docs/import.md
// §Memory): every row once, in order, and a bounded set of statement texts whatever the lengths.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statementSizes } from '../../src/db/insert-rows.ts';

test('rows split into full statements, then descending powers of two', () => {
  assert.deepEqual(statementSizes(0, 500), []);
  assert.deepEqual(statementSizes(1, 500), [1]);
  assert.deepEqual(statementSizes(1300, 500), [500, 500, 256, 32, 8, 4]);
  assert.deepEqual(statementSizes(1000, 500), [500, 500]);
});

test('every length is covered, with at most a few distinct counts per table', () => {
  const counts = new Set<number>();
  for (let n = 0; n <= 5000; n++) {
    const sizes = statementSizes(n, 800);
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      n,
    );
    for (const s of sizes) counts.add(s);
  }
  // 800 and the powers of two below it: 1, 2, 4, …, 512.
  assert.ok(counts.size <= 11, `${counts.size} distinct statement sizes`);
});
