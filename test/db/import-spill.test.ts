// The checked objects an import keeps on disk between its check and its writes (src/import/spill.ts,
// docs/import.md §Memory): removed at any moment, even with a write under way, without an
// unhandled error; a file that cannot be written fails the import instead of losing objects.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { Spill } from '../../src/import/spill.ts';

test('a spill removed while its first write is still under way leaves no file and raises nothing', async () => {
  const dirs: string[] = [];
  // A failed check removes the spill at whatever moment its last good object was added: each
  // round waits a different number of turns of the event loop, so some land mid-write.
  for (let round = 0; round < 90; round++) {
    const spill = await Spill.open();
    dirs.push(spill.dir);
    await spill.add('account', 1, { object: 'account', externalId: `a${round}` });
    for (let turn = 0; turn < round % 30; turn++) await new Promise((resolve) => setImmediate(resolve));
    await spill.remove();
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(
    dirs.filter((dir) => existsSync(dir)),
    [],
  );
});

test('a file that cannot be written fails the import; the objects written read back in order', async () => {
  const spill = await Spill.open();
  try {
    await spill.add('contact', 1, { externalId: 'c1' });
    await spill.add('contact', 3, { externalId: 'c2' });
    // A kind whose file name is longer than the file system allows cannot be opened.
    await spill.add('x'.repeat(300), 2, { externalId: 'x1' });
    await assert.rejects(spill.finish(), { code: 'ENAMETOOLONG' });
    const read = [];
    for await (const item of spill.read('contact')) read.push(item);
    assert.deepEqual(read, [
      { line: 1, raw: { externalId: 'c1' } },
      { line: 3, raw: { externalId: 'c2' } },
    ]);
  } finally {
    await spill.remove();
  }
  assert.equal(existsSync(spill.dir), false);
});
