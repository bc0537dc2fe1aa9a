// Closing a PostgreSQL handle lets its process exit, even after a lane missed its deadline and was
// replaced (docs/reliability.md §Lost connections): the replaced client, still ending gently, is
// ended with the handle.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { TEST_DATABASE_URL } from '../helpers/services.ts';

test('a handle closed after a lane was replaced leaves nothing that keeps the process alive', async () => {
  const child = spawn(process.execPath, ['test/helpers/silent-close-child.ts', TEST_DATABASE_URL], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  // The handle's close ends the replaced client within a second; a process still alive long after
  // is killed, and fails the test.
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.on('exit', (c, s) => r([c, s])));
  clearTimeout(killer);
  assert.equal(out.trim(), 'DeadlineError', 'the read missed its deadline');
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, 'the process exited by itself');
});
