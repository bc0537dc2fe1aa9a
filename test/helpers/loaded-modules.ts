// Run as a child process: opens an embedded (SQLite) server's dependencies, builds the app, starts
// the server's jobs as `serve` would, and prints the npm packages whose modules were loaded, one a line
// (and `node:undici` when Node's bundled fetch was loaded).
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
// Node's own bundled fetch (undici) is not an npm package: its internal module is named here as one.
const internal = (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
if (internal.includes('NativeModule internal/deps/undici/undici')) loaded.add('node:undici');
process.stdout.write([...loaded].sort().join('\n') + '\n');
await app.close();
