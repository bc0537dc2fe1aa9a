// `rolodex import` runs under V8 flags that keep its heap near what it holds (docs/import.md
// §Memory): the process starts Node again with them, with two malloc arenas and Node's compile
// cache on, whichever entry started it.
// The tests share one temporary directory, and so one compile cache and one probe (whose path is
// among the flags that key a fill): what one entry's import filled, the other's finds filled.
// Which process fills, and when, is none of what they check, and a fill's processes print nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** A young generation of 2 × 4 MB, an old one that grows by 30% of what survived a full collection. */
const IMPORT_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=30'];
const ENTRIES = { 'src/cli/main.ts': '../../src/cli/main.ts', 'bin/rolodex.js': '../../bin/rolodex.js' };

const dir = mkdtempSync(join(tmpdir(), 'rolodex-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// Loaded by every start of Node in the process: says which flags that one had.
const probe = join(dir, 'probe.mjs');
writeFileSync(
  probe,
  "import { getCompileCacheDir } from 'node:module';\nimport { isMainThread } from 'node:worker_threads';\nif (isMainThread) process.stderr.write(`flags ${JSON.stringify([...process.execArgv, process.env.MALLOC_ARENA_MAX ?? 'arenas unbounded', getCompileCacheDir() ?? 'no cache'])}\\n`);\n",
);
// The cache goes under this file's temporary directory, not the machine's.
const env: Record<string, string | undefined> = {
  ...process.env,
  TMPDIR: dir,
  NODE_COMPILE_CACHE: undefined,
  NODE_DISABLE_COMPILE_CACHE: undefined,
  MALLOC_ARENA_MAX: undefined,
};

for (const [name, path] of Object.entries(ENTRIES)) {
  test(`rolodex import started by ${name} runs under its V8 flags, two malloc arenas and the compile cache; other commands do not`, () => {
    const run = (command: string) => {
      const r = spawnSync(process.execPath, [`--import=${probe}`, fileURLToPath(new URL(path, import.meta.url)), command, '--help'], {
        encoding: 'utf8',
        env,
      });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^rolodex ${command} `));
      return r.stderr
        .split('\n')
        .filter((l) => l.startsWith('flags '))
        .map((l) => JSON.parse(l.slice(6)) as string[]);
    };
    const starts = run('import');
    assert.deepEqual(starts.at(-1)!.slice(0, IMPORT_FLAGS.length), IMPORT_FLAGS);
    assert.ok(starts.at(-1)!.at(-1)!.startsWith(join(dir, 'node-compile-cache')), `the compile cache: ${starts.at(-1)!.at(-1)}`);
    assert.equal(starts.at(-1)!.at(-2), '2', 'two malloc arenas');
    assert.ok(starts.length <= 2, `Node started ${starts.length} times`);
    assert.ok(
      run('export').every((flags) => !flags.some((f) => IMPORT_FLAGS.includes(f)) && flags.includes('arenas unbounded')),
      'export runs under no flag of import',
    );
  });
}
