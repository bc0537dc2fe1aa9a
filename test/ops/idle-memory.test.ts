// An idle server holds no more memory than it uses (docs/performance.md §Idle memory and wake-ups):
// the young generation that start-up grew is given back before the server listens, so a started
// server's own metrics show it at its smallest; and a server started through bin/rolodex.js
// writes Node's compile cache, so that the next start does without the TypeScript stripper.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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

test(
  'a server started through bin/rolodex.js has written the compile cache once it listens',
  { skip: process.env.NODE_COMPILE_CACHE ? 'NODE_COMPILE_CACHE is set: Node itself enables the cache' : false },
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-idle-'));
    // The cache goes under the process's temporary directory: this test's own, not the machine's.
    const tmp = mkdtempSync(join(tmpdir(), 'rolodex-tmp-'));
    const server = await startServerProcess({ DATA_DIR: dataDir, TMPDIR: tmp });
    try {
      const cache = join(tmp, 'node-compile-cache');
      assert.ok(existsSync(cache), 'the compile cache directory is made');
      // One subdirectory per Node version and V8 flags; beside them, the fill's stamps (files).
      const versions = readdirSync(cache, { withFileTypes: true }).filter((e) => e.isDirectory());
      const entries = versions.flatMap((version) => readdirSync(join(cache, version.name)));
      // One entry per module compiled: the server's own and its dependencies', well over 100.
      assert.ok(entries.length >= 100, `${entries.length} entries`);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(tmp, { recursive: true, force: true });
    }
  },
);
