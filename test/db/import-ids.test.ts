// What an import keeps of its externalIds outside the JavaScript heap (src/import/ids.ts,
// docs/import.md §Memory): the duplicate check, the id map and the lines linked early.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { ImportIds } from '../../src/import/ids.ts';
import { LineSet } from '../../src/records/import-links.ts';

test('an externalId is seen once per name; ids are found by object and externalId, and listed', async () => {
  const ids = await ImportIds.open();
  try {
    assert.equal(ids.see('contact', 'c1'), true);
    assert.equal(ids.see('contact', 'c1'), false);
    assert.equal(ids.see('record project', 'c1'), true);
    ids.set('contact', 'c2', 'con_2');
    ids.set('contact', 'c1', 'con_1');
    ids.set('project', 'c1', 'rec_1');
    assert.equal(ids.get('contact', 'c1'), 'con_1');
    assert.equal(ids.get('account', 'c1'), undefined);
    assert.deepEqual(ids.objects(), ['contact', 'project']);
    assert.deepEqual(
      [...ids.entries('contact')],
      [
        ['c1', 'con_1'],
        ['c2', 'con_2'],
      ],
    );
    assert.deepEqual(ids.toRecord(), { contact: { c1: 'con_1', c2: 'con_2' }, project: { c1: 'rec_1' } });
  } finally {
    await ids.close();
  }
});

test('the store is removed when closed', async () => {
  const ids = await ImportIds.open();
  await ids.close();
  assert.equal(existsSync(ids.path), false);
});

test('a line set holds lines as bits, growing as needed', () => {
  const lines = new LineSet();
  for (const l of [1, 7, 8, 9000, 1_000_003]) lines.add(l);
  for (const l of [1, 7, 8, 9000, 1_000_003]) assert.equal(lines.has(l), true);
  for (const l of [0, 2, 9, 8999, 1_000_002, 5_000_000]) assert.equal(lines.has(l), false);
});
