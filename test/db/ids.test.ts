// Ids (docs/architecture.md §Data): prefixed by kind, time-sortable, opaque. An import draws
// its new objects' ids from one sequence (docs/import.md §Speed): they grow in the order drawn.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idSequence, newId } from '../../src/lib/ids.ts';

const SHAPE = /^con_[0-9a-hjkmnp-tv-z]{26}$/;

test('ids of one sequence grow in the order drawn, with the time of the sequence', () => {
  const now = Date.UTC(2026, 10, 27, 7, 0, 0);
  const next = idSequence(now);
  const ids = Array.from({ length: 20_000 }, () => next('con'));
  for (const id of ids) assert.match(id, SHAPE);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} then ${ids[i]}`);
  // Same time part as newId's for that instant: the sequence sorts among other ids of its time.
  assert.equal(ids[0]!.slice(0, 14), newId('con', now).slice(0, 14));
  // Steps are random (1 to 65,536), so an id does not tell the next one.
  const value = (id: string) => [...id.slice(-16)].reduce((v, c) => v * 32n + BigInt('0123456789abcdefghjkmnpqrstvwxyz'.indexOf(c)), 0n);
  const steps = ids.slice(1, 101).map((id, i) => value(id) - value(ids[i]!));
  assert.ok(steps.every((d) => d >= 1n && d <= 65_536n));
  assert.ok(new Set(steps).size > 90);
});

test('two sequences of the same instant do not draw the same ids', () => {
  const now = Date.now();
  const a = new Set(Array.from({ length: 1000 }, idSequence(now).bind(null, 'con')));
  const b = Array.from({ length: 1000 }, idSequence(now).bind(null, 'con'));
  assert.equal(b.filter((id) => a.has(id)).length, 0);
});

test('a sequence carries from its low 40 bits into its high ones and keeps growing by its steps', () => {
  const value = (id: string) => [...id.slice(-16)].reduce((v, c) => v * 32n + BigInt('0123456789abcdefghjkmnpqrstvwxyz'.indexOf(c)), 0n);
  // Two below a multiple of 2^40: the second id at the latest is past it.
  const start = (6n << 40n) - 2n;
  const next = idSequence(Date.UTC(2026, 10, 27, 7, 0, 0), start);
  const ids = Array.from({ length: 50 }, () => next('con'));
  let before = start;
  for (const id of ids) {
    assert.match(id, SHAPE);
    const step = value(id) - before;
    assert.ok(step >= 1n && step <= 65_536n, `${id}: step ${step}`);
    before = value(id);
  }
  assert.ok(value(ids[1]!) >= 6n << 40n);
});

test('newId draws the ids of one millisecond in increasing order, even when other milliseconds interleave', () => {
  const t = Date.UTC(2026, 11, 3, 5, 0, 0);
  const ids: string[] = [];
  for (let i = 0; i < 200; i++) {
    ids.push(newId('con', t));
    newId('req', t + 1 + (i % 10));
  }
  for (const id of ids) assert.match(id, SHAPE);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} then ${ids[i]}`);
});
