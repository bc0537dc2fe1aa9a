// What the log says while the S3 blob store answers 503 to everything (docs/reliability.md
// §Operational faults in the log, §Blob store): each request that needs it is answered 503
// service_unavailable, and the log says so in one line without a stack for all of them, then
// 'blob store reachable again' once the store answers the process's own probe. The store is
// s3rver behind a switch that answers 503 ServiceUnavailable while it is on.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBlobStore } from '../../src/blobs/index.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { assertError, createSession } from '../helpers/files.ts';
import { ACCESS_KEY, startTestS3, type TestS3 } from '../helpers/s3-server.ts';

for (const dialect of testDialects()) {
  describe(`an S3 store in an outage [${dialect}]`, () => {
    let s3: TestS3;
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, {
        deps: async (deps, config) => {
          s3 = await startTestS3(join(config.dataDir, 's3rver'), 'files');
          await deps.blobs.close();
          deps.blobs = await createBlobStore({
            kind: 's3',
            bucket: 'files',
            region: 'us-east-1',
            endpoint: s3.endpoint,
            forcePathStyle: true,
            accessKeyId: ACCESS_KEY,
            secretAccessKey: ACCESS_KEY,
            spoolDir: config.dataDir,
          });
        },
      });
    });
    after(async () => {
      await t.close();
      await s3.close();
    });

    test('requests answered 503 log one line without a stack, and the end of the outage another', async () => {
      const { secret } = await seedWorkspace(t);
      const sessions = [];
      for (let i = 0; i < 4; i++) sessions.push(await createSession(t, secret, { filename: `${i}.txt`, mimeType: 'text/plain', sizeBytes: 5 }));
      const from = t.logs().length;
      s3.unavailable(true);
      for (const session of sessions) {
        const done = await call(t, secret, 'POST', `/v1/files/${session.id}/complete`, {});
        assertError(done, 503, 'service_unavailable');
        assert.equal(done.headers['retry-after'], '1');
      }
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
      s3.unavailable(false);
      const lines = () =>
        t
          .logs()
          .slice(from)
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { msg: string; level: number; code?: string; reason?: string });
      // The end is said once the store answers a probe of the process's own, within a few seconds.
      for (let i = 0; i < 100 && !lines().some((l) => l.msg === 'blob store reachable again'); i++) await sleep(100);
      const said = lines().filter((l) => l.msg !== 'request');
      assert.deepEqual(
        said.map((l) => [l.level, l.msg]),
        [
          [40, 'blob store not reachable; requests that need it are answered 503 until it is back'],
          [30, 'blob store reachable again'],
        ],
      );
      // The line names the fault: the store's answer, an answer to HEAD having nothing but its status.
      assert.match(said[0]!.reason ?? '', /^the blob store is not reachable: HTTP 503/);
      assert.ok(!t.logs().slice(from).includes('"stack"'), 'a line carries a stack');
      // Each request still has its own line, with its status.
      assert.equal(lines().filter((l) => l.msg === 'request').length, 5);
      // The store serves again: a complete before any upload is the client's, 409.
      assertError(await call(t, secret, 'POST', `/v1/files/${sessions[0]!.id}/complete`, {}), 409, 'upload_incomplete');
      assert.equal(t.app.faults.blobStore.down, false);
    });
  });
}
