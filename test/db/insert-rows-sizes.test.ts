// Multi-row inserts in statements of a few row counts only (src/db/insert-rows.ts, docs/import.md
// §Memory): every row once, in order, and a bounded set of statement texts whatever the lengths.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SMALL_ROWS, statementSizes } from '../../src/db/insert-rows.ts';

test('rows split into full statements, then descending powers of two, and a small rest in one', () => {
  assert.deepEqual(statementSizes(0, 500), []);
  assert.deepEqual(statementSizes(1, 500), [1]);
  assert.deepEqual(statementSizes(SMALL_ROWS, 500), [SMALL_ROWS]);
  assert.deepEqual(statementSizes(1300, 500), [500, 500, 256, 44]);
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
  // 800, the powers of two from 512 down to 64, and 1 to SMALL_ROWS.
  assert.ok(counts.size <= 1 + 4 + SMALL_ROWS, `${counts.size} distinct statement sizes`);
});
