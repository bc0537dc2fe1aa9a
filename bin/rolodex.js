#!/usr/bin/env node
// The CLI is TypeScript run directly by Node 24. `npx rolodex` may start under an older system
// Node, so re-run under the Node 24 that the project pins as a devDependency when needed. The
// re-run passes SIGTERM, SIGINT and SIGHUP on, and watches this process (ROLODEX_WATCH_PARENT), so that
// it stops with it even when this one is killed with SIGKILL (docs/deploy.md §Start and stop).
import { spawn } from 'node:child_process';
import module, { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (major >= 24) {
  // Node's compile cache keeps each module's type-stripped source and V8's code for it, so that
  // every start after the first loads neither Node's TypeScript stripper (held for the life of
  // the process) nor compiles again (docs/deploy.md §Start and stop). Enabled before the first
  // TypeScript module loads, and filled with every module of src/ when it does not hold this
  // checkout yet (bin/compile-cache.js); the environment passes it on to the cluster's workers.
  // The directory named to Node is the one set in the environment, if any: `directory` is then
  // the subdirectory of this Node and its flags, which Node would nest a new cache in.
  const cache = module.enableCompileCache();
  const directory = cache.directory && (process.env.NODE_COMPILE_CACHE || cache.directory);
  if (directory) {
    process.env.NODE_COMPILE_CACHE = directory;
    await (await import('./compile-cache.js')).fillCompileCache(directory);
  }
  const cli = await import(main);
  process.exitCode = await cli.runProcess(process.argv.slice(2));
  // `serve` returns once it listens: what it loaded is written now, however the process ends.
  module.flushCompileCache();
} else {
  const require = createRequire(import.meta.url);
  let node;
  try {
    node = require.resolve('node/bin/node');
  } catch {
    console.error(`rolodex needs Node.js 24 (found ${process.versions.node}); run npm install first.`);
    process.exit(1);
  }
  // The re-run is this file under Node 24: it turns the compile cache on and fills it, as above.
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, ROLODEX_WATCH_PARENT: '1' },
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      // Ends as the child did: by the same signal, with no handler left to catch it.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
