#!/usr/bin/env node
// The CLI is TypeScript run directly by Node 24. `npx rolodex` may start under an older system
// Node, so re-run under the Node 24 that the project pins as a devDependency when needed.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (major >= 24) {
  const cli = await import(main);
  process.exitCode = await cli.main(process.argv.slice(2));
} else {
  const require = createRequire(import.meta.url);
  let node;
  try {
    node = require.resolve('node/bin/node');
  } catch {
    console.error(`rolodex needs Node.js 24 (found ${process.versions.node}); run npm install first.`);
    process.exit(1);
  }
  const r = spawnSync(node, [main, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
