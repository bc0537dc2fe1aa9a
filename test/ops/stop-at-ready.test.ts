// A stop signal that arrives just as the start hands its signals over to the server's own stop
// (docs/deploy.md §Start and stop): caught while the start still ran, it stops the server, in
// either mode. The preload raises SIGTERM at the moment the start removes its own handler.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { createTestDb, testDialects } from '../helpers/db.ts';
import { BIN, cleanUp, launch, type Launched } from '../helpers/launch.ts';
import { freePort } from '../helpers/process.ts';

const PRELOAD = fileURLToPath(new URL('../helpers/signal-at-handover.mjs', import.meta.url));

for (const dialect of testDialects()) {
  describe(`a SIGTERM caught at the hand-over [${dialect}]`, () => {
    for (const workers of ['1', '2']) {
      test(`WORKERS=${workers}: the server stops, exit code 0`, async () => {
        const tdb = await createTestDb(dialect);
        let l: Launched | undefined;
        try {
          const env = {
            DATA_DIR: tdb.dataDir,
            PORT: String(await freePort()),
            WORKERS: workers,
            NODE_OPTIONS: `--import=${PRELOAD}`,
            ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
          };
          l = launch(process.execPath, [BIN, 'serve'], env);
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 60_000)));
          const stopped = await Promise.race([l.exited, late]).finally(() => clearTimeout(timer));
          assert.ok(stopped, `still running a minute after the signal:\n${l.output().slice(-2000)}`);
          assert.equal(stopped.code, 0, l.output());
          assert.match(l.output(), /"signal":"SIGTERM".*"msg":"shutting down"/);
        } finally {
          cleanUp(l);
          await tdb.drop();
        }
      });
    }
  });
}
