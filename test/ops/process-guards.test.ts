// An error nobody handled (docs/reliability.md §Unhandled errors): a promise rejection is logged
// and the process serves on; an uncaught exception is logged and ends the process with status 1,
// for its supervisor to restart it. Each runs in a child process of its own, as the server would.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const GUARDS = fileURLToPath(new URL('../../src/process-guards.ts', import.meta.url));

/** Runs `body` after the guards are installed in a fresh process; resolves to its exit code and output. */
async function child(body: string): Promise<{ code: number | null; out: string }> {
  const code = `
    import { createServer } from 'node:http';
    import { pino } from 'pino';
    import { installProcessGuards } from ${JSON.stringify(GUARDS)};
    installProcessGuards(pino());
    ${body}
  `;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', code], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (c) => (out += String(c)));
  proc.stderr.on('data', (c) => (out += String(c)));
  const [exit] = (await once(proc, 'exit')) as [number | null];
  return { code: exit, out };
}

test('a promise rejection nobody handles is logged, and the process goes on serving', async () => {
  const { code, out } = await child(`
    const server = createServer((_req, res) => res.end('served')).listen(0, '127.0.0.1', async () => {
      Promise.reject(new Error('nobody handles this'));
      await new Promise((r) => setTimeout(r, 50));
      const text = await (await fetch('http://127.0.0.1:' + server.address().port)).text();
      console.log('answer:' + text);
      server.close();
    });
  `);
  assert.equal(code, 0, out);
  assert.match(out, /"level":50.*unhandled promise rejection; serving on/);
  assert.match(out, /nobody handles this/);
  assert.match(out, /answer:served/);
});

test('an exception nobody catches is logged, and the process exits with status 1 for its supervisor', async () => {
  const { code, out } = await child(`
    setTimeout(() => { throw new Error('nobody catches this'); }, 10);
    setTimeout(() => console.log('still running'), 500);
  `);
  assert.equal(code, 1, out);
  assert.match(out, /"level":60.*uncaught exception; exiting/);
  assert.doesNotMatch(out, /still running/);
});
