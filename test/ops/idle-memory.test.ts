// An idle server holds no more memory than it uses (docs/performance.md §Idle memory and wake-ups):
// the young generation that start-up grew is given back before the server listens, so a started
// server's own metrics show it at its smallest. That a server started through bin/rolodex.js has
// written Node's compile cache once it listens is checked on its first start in
// test/ops/compile-cache.test.ts, the one start there on an empty cache.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startServerProcess } from '../helpers/process.ts';

const MB = 1024 * 1024;

test('a started server has given back the young generation that start-up grew', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-idle-'));
  const server = await startServerProcess({ DATA_DIR: dataDir });
  try {
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const m = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(text);
    assert.ok(m, 'the young generation is reported');
    // At its smallest 1 MB; grown by start-up, 32 MB or more.
    assert.ok(Number(m[1]) <= 8 * MB, `young generation of ${(Number(m[1]) / MB).toFixed(1)} MB`);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
