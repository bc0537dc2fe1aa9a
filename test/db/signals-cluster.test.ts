// Commit signals between the workers of a cluster on one SQLite file (src/db/sqlite/signals.ts):
// a worker's commit that signals wakes a listener in another worker, through the primary's relay.
// The cluster is real (test/helpers/signal-cluster-child.ts): a primary and two worker processes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const CHILD = new URL('../helpers/signal-cluster-child.ts', import.meta.url).pathname;

test('a commit in one worker signals a listener in another, through the primary', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-signals-'));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [CHILD, join(dir, 'rolodex.db')], { timeout: 60_000 });
    assert.equal(stdout.trim(), 'heard');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
