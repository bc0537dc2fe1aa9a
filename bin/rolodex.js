#!/usr/bin/env node
// The CLI is TypeScript run directly by Node 24. `npx rolodex` may start under an older system
// Node, so re-run under the Node 24 that the project pins as a devDependency when needed. The
// re-run passes SIGTERM and SIGINT on, and watches this process (ROLODEX_WATCH_PARENT), so that
// it stops with it even when this one is killed with SIGKILL (docs/deploy.md §Start and stop).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (major >= 24) {
  const cli = await import(main);
  process.exitCode = await cli.runProcess(process.argv.slice(2));
} else {
  const require = createRequire(import.meta.url);
  let node;
  try {
    node = require.resolve('node/bin/node');
  } catch {
    console.error(`rolodex needs Node.js 24 (found ${process.versions.node}); run npm install first.`);
    process.exit(1);
  }
  const child = spawn(node, [main, ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, ROLODEX_WATCH_PARENT: '1' } });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      // Ends as the child did: by the same signal, with no handler left to catch it.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
