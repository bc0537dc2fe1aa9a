// An S3 store that this deployment's settings cannot use, as an API client meets it
// (docs/errors.md, docs/reliability.md §Blob store): a bucket that does not exist, credentials the
// store refuses. A request that needs the store answers 503 service_unavailable, never 409
// upload_incomplete (which tells the client to upload again) nor 500, and the server logs one
// line naming the cause, not one per request. The same store with the right settings still
// answers upload_incomplete.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createBlobStore, type BlobStore } from '../../src/blobs/index.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { assertError, createSession } from '../helpers/files.ts';
import { ACCESS_KEY, startTestS3, type TestS3 } from '../helpers/s3-server.ts';

const SETTINGS = {
  right: { bucket: 'files', accessKeyId: ACCESS_KEY },
  'no such bucket': { bucket: 'no-such-bucket', accessKeyId: ACCESS_KEY },
  'refused credentials': { bucket: 'files', accessKeyId: 'NOT-A-KEY' },
} as const;
type Setting = keyof typeof SETTINGS;

/** A store whose settings a test switches; the app binds its blob store once, when it is built. */
function switchable(stores: Record<Setting, BlobStore>): { store: BlobStore; use: (s: Setting) => void } {
  let current = stores.right;
  const store = {
    kind: 's3',
    put: (...a) => current.put(...a),
    stat: (key) => current.stat(key),
    size: (key) => current.size(key),
    read: (...a) => current.read(...a),
    delete: (key) => current.delete(key),
    presignPut: (...a) => current.presignPut!(...a),
    presignGet: (...a) => current.presignGet!(...a),
    ping: () => current.ping(),
    removeStaleTemp: (b) => current.removeStaleTemp(b),
    close: async () => {
      for (const s of Object.values(stores)) await s.close();
    },
  } satisfies BlobStore;
  return { store, use: (s) => (current = stores[s]) };
}

const CAUSES: [Setting, RegExp][] = [
  ['no such bucket', /the bucket "no-such-bucket" does not exist \(S3_BUCKET\)/],
  ['refused credentials', /refused the server's credentials/],
];

for (const dialect of testDialects()) {
  describe(`files on an S3 store its settings cannot use [${dialect}]`, () => {
    let s3: TestS3;
    let t: TestApp;
    let use: (s: Setting) => void = () => {};
    before(async () => {
      t = await buildTestApp(dialect, {
        deps: async (deps, config) => {
          s3 = await startTestS3(join(config.dataDir, 's3rver'), 'files');
          await deps.blobs.close();
          const make = (s: Setting) =>
            createBlobStore({
              kind: 's3',
              region: 'us-east-1',
              endpoint: s3.endpoint,
              forcePathStyle: true,
              ...SETTINGS[s],
              secretAccessKey: ACCESS_KEY,
              spoolDir: config.dataDir,
            });
          const sw = switchable({
            right: await make('right'),
            'no such bucket': await make('no such bucket'),
            'refused credentials': await make('refused credentials'),
          });
          deps.blobs = sw.store;
          use = sw.use;
        },
      });
    });
    after(async () => {
      await t.close();
      await s3.close();
    });

    test('with the right settings, complete before any upload is 409 upload_incomplete', async () => {
      use('right');
      const { secret } = await seedWorkspace(t);
      const session = await createSession(t, secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: 5 });
      assertError(await call(t, secret, 'POST', `/v1/files/${session.id}/complete`, {}), 409, 'upload_incomplete');
    });

    for (const [setting, cause] of CAUSES) {
      test(`${setting}: complete answers 503 service_unavailable and the log names the cause once`, async () => {
        use(setting);
        const { secret } = await seedWorkspace(t);
        const session = await createSession(t, secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: 5 });
        const logged = t.logs().length;
        const done = await call(t, secret, 'POST', `/v1/files/${session.id}/complete`, {});
        const error = assertError(done, 503, 'service_unavailable');
        assert.equal(done.headers['retry-after'], '1');
        assert.doesNotMatch(JSON.stringify(error), /bucket|S3|127\.0\.0\.1|NOT-A-KEY/);
        // Once more: the same cause is not logged again (docs/reliability.md §Operational faults in the log).
        assertError(await call(t, secret, 'POST', `/v1/files/${session.id}/complete`, {}), 503, 'service_unavailable');
        const lines = t.logs().slice(logged).split('\n').filter(Boolean);
        const named = lines.map((l) => JSON.parse(l) as { level: number; msg: string; reason?: string }).filter((l) => cause.test(l.reason ?? ''));
        assert.deepEqual(
          named.map((l) => [l.level, l.msg]),
          [[50, "the blob store refuses this deployment's settings; requests that need it are answered 503 until they are mended"]],
          lines.join('\n'),
        );
        assert.equal(lines.filter((l) => /unhandled|"stack"/.test(l)).length, 0, lines.join('\n'));
        // The file is as it was: a complete once the settings are right finds no bytes.
        use('right');
        assertError(await call(t, secret, 'POST', `/v1/files/${session.id}/complete`, {}), 409, 'upload_incomplete');
      });
    }

    test('the readiness probe fails on either, and the blob store says why', async () => {
      for (const [setting, cause] of CAUSES) {
        use(setting);
        await assert.rejects(t.deps.blobs.ping(), cause);
        assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
      }
      use('right');
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    });
  });
}
