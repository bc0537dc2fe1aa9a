// The scratch store (src/db/scratch.ts): a command's temporary SQLite database, synchronous maps
// of (group, key) to a value, removed when closed.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { ScratchStore } from '../../src/db/index.ts';

test('maps add, put, get and list by group, each in its own table', async () => {
  const store = await ScratchStore.open({ tables: ['a', 'b'], cacheKiB: 256, prefix: 'rolodex-scratch-test-' });
  try {
    const a = store.table('a');
    const b = store.table('b');
    assert.equal(a.add('g', 'k1'), true);
    assert.equal(a.add('g', 'k1', 'v'), false, 'an added key is kept, with its value');
    assert.equal(a.get('g', 'k1'), null);
    assert.equal(a.get('g', 'k2'), undefined);
    a.put('g', 'k2', 'v2');
    a.put('g', 'k2', 'v3');
    a.put('f', 'k9', 'v9');
    assert.equal(a.get('g', 'k2'), 'v3');
    assert.deepEqual(a.groups(), ['f', 'g']);
    assert.deepEqual(
      [...a.entries('g')],
      [
        ['k1', null],
        ['k2', 'v3'],
      ],
    );
    assert.deepEqual(b.groups(), [], 'tables are apart');
    assert.equal(b.add('g', 'k1', 'x'), true);
    assert.equal(b.get('g', 'k1'), 'x');
    assert.throws(() => store.table('c'), /no scratch table c/);
  } finally {
    await store.close();
  }
});

test('the store lives under the temporary directory and is removed when closed, once', async () => {
  const store = await ScratchStore.open({ tables: ['t'], cacheKiB: 256, prefix: 'rolodex-scratch-test-' });
  assert.ok(store.path.startsWith(tmpdir()), store.path);
  assert.equal(existsSync(store.path), true);
  await store.close();
  await store.close();
  assert.equal(existsSync(store.path), false);
});

test("a table's name is a plain word", async () => {
  await assert.rejects(ScratchStore.open({ tables: ['a"b'], cacheKiB: 256, prefix: 'rolodex-scratch-test-' }), /letters, digits and underscores/);
});
