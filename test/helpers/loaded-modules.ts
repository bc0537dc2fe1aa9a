// Run as a child process: opens an embedded (SQLite) server's dependencies, builds the app, starts
// the server's jobs as `serve` would, and prints the npm packages whose modules were loaded, one a line.
import { registerHooks } from 'node:module';

const loaded = new Set<string>();
registerHooks({
  load(url, context, next) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) loaded.add(m[1]!);
    return next(url, context);
  },
});
// Imported after the hook, so that every module the app loads is seen.
const { startServer } = await import('../../src/server.ts');
const { loadConfig } = await import('../../src/config.ts');
const app = await startServer(loadConfig({ DATA_DIR: process.argv[2], PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1' }));
process.stdout.write([...loaded].sort().join('\n') + '\n');
await app.close();
