// A server whose standard output lost its reader (a closed pipe: a log shipper or `| tee` that
// ended) still stops (docs/reliability.md §A log nobody reads): the exit's last write of the log
// fails with EPIPE, and the process ends with the code it was given instead of trying that write
// again every 100 ms for good, deaf to SIGTERM (scripts/patch-sonic-boom.mjs).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('../helpers/log-exit-child.ts', import.meta.url));
// A process that exits at once does so well within this; one caught in the loop never does.
const EXIT_MS = 5_000;

test('a process logging to a closed pipe exits with its code', async () => {
  const child = spawn(process.execPath, [CHILD], { stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = once(child, 'exit');
  // The reader goes away before the process logs anything.
  child.stdout.destroy();
  child.stdin.end('go\n');
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), EXIT_MS)));
  const outcome = await Promise.race([exited, hung]);
  clearTimeout(timer);
  if (outcome === 'hung') {
    child.kill('SIGKILL');
    await exited;
  }
  assert.deepEqual(outcome, [0, null], `the process did not exit within ${EXIT_MS} ms`);
});
