// `rolodex serve` on an S3 store its settings cannot use (docs/deploy.md §Probes): it says so at
// start, in one line naming the setting to fix (once, with workers too), and serves on, /readyz
// answering 503; with the right settings it says nothing of the store. A store that cannot be
// reached is one warning: its reason once and its code, no stack (a refused connection is expected).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createTestDb, testDialects } from '../helpers/db.ts';
import { BIN, cleanUp, launch, type Launched, until } from '../helpers/launch.ts';
import { freePort } from '../helpers/process.ts';
import { ACCESS_KEY, startTestS3 } from '../helpers/s3-server.ts';

const START_MS = 60_000;
const STOP_MS = 12_000;
const MISSING = /the blob store refuses this deployment's settings: the bucket "no-such-bucket" does not exist \(S3_BUCKET\)/;

/**
 * How the server exited, once it has, within STOP_MS. The timer is unref'd: once the server has
 * exited, it does not hold the file's process open for the rest of STOP_MS.
 */
const exitOf = (l: Launched) => Promise.race([l.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no exit')), STOP_MS).unref())]);

/** The messages of the JSON lines a server logged. */
const messages = (l: Launched): string[] =>
  l
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));

for (const dialect of testDialects()) {
  describe(`serve on S3 [${dialect}]`, () => {
    for (const [bucket, workers] of [
      ['no-such-bucket', '2'],
      ['no-such-bucket', '1'],
      ['files', '2'],
    ] as const) {
      test(`S3_BUCKET=${bucket}, WORKERS=${workers}`, async () => {
        const tdb = await createTestDb(dialect);
        const s3 = await startTestS3(join(tdb.dataDir, 's3rver'), 'files');
        const port = await freePort();
        let l: Launched | undefined;
        try {
          l = launch(process.execPath, [BIN, 'serve'], {
            DATA_DIR: tdb.dataDir,
            PORT: String(port),
            WORKERS: workers,
            ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
            S3_BUCKET: bucket,
            S3_ENDPOINT: s3.endpoint,
            S3_ACCESS_KEY_ID: ACCESS_KEY,
            S3_SECRET_ACCESS_KEY: ACCESS_KEY,
          });
          const output = l.output;
          await until('listening', () => /rolodex listening on/.test(output()), START_MS, output);
          const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
          if (bucket === 'files') {
            assert.equal(ready.status, 200);
            assert.equal(messages(l).filter((m) => /blob store/.test(m)).length, 0, output());
          } else {
            assert.equal(ready.status, 503);
            await until('the bucket named', () => messages(l!).some((m) => MISSING.test(m)), START_MS, output);
            // Every worker has checked its store by now if it were going to: still one line.
            await new Promise((r) => setTimeout(r, 300));
            assert.equal(messages(l).filter((m) => MISSING.test(m)).length, 1, output());
          }
          l.child.kill('SIGTERM');
          const { code } = await exitOf(l);
          assert.equal(code, 0, output());
        } finally {
          cleanUp(l);
          await s3.close();
          await tdb.drop();
        }
      });
    }

    test('an S3 store that refuses connections is one warning: its reason once, its code, no stack', async () => {
      const tdb = await createTestDb(dialect);
      const [port, closed] = [await freePort(), await freePort()];
      let l: Launched | undefined;
      try {
        l = launch(process.execPath, [BIN, 'serve'], {
          DATA_DIR: tdb.dataDir,
          PORT: String(port),
          WORKERS: '1',
          ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
          S3_BUCKET: 'files',
          S3_ENDPOINT: `http://127.0.0.1:${closed}`,
          S3_ACCESS_KEY_ID: ACCESS_KEY,
          S3_SECRET_ACCESS_KEY: ACCESS_KEY,
        });
        const output = l.output;
        const warned = () =>
          output()
            .split('\n')
            .filter((line) => line.includes('the blob store did not answer at start'));
        await until('the warning', () => warned().length > 0, START_MS, output);
        const [line] = warned();
        assert.equal(warned().length, 1, output());
        assert.equal(line!.match(/connect ECONNREFUSED/g)?.length, 1, line);
        assert.ok(!line!.includes('stack') && !line!.includes('    at '), line);
        const entry = JSON.parse(line!) as { level: number; code?: string };
        assert.equal(entry.level, 40, line);
        assert.equal(entry.code, 'ECONNREFUSED', line);
        l.child.kill('SIGTERM');
        const { code } = await exitOf(l);
        assert.equal(code, 0, output());
      } finally {
        cleanUp(l);
        await tdb.drop();
      }
    });
  });
}
