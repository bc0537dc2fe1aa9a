// An S3 store that cannot be reached, as an API client meets it (docs/errors.md): a store that
// accepts connections but never answers, and one that refuses them. A request that needs the
// store answers 503 service_unavailable in the documented shape within a bounded time, never a
// hang nor a 500; one that needs it only after its commit (cancel) still answers.
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBlobStore } from '../../src/blobs/index.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { assertError, createSession } from '../helpers/files.ts';

/** A TCP server that takes connections and never answers on them. */
async function silentServer(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Resolves to `promise`'s value, or to 'no answer' when it has none within `ms`. The timer is
 * unref'd: once the answer has come, it does not hold the file's process open for the rest of `ms`.
 */
const within = <T>(ms: number, promise: Promise<T>) => Promise.race([promise, sleep(ms, 'no answer' as const, { ref: false })]);

const STORES = [
  ['accepts connections and never answers', (silent: string) => silent],
  ['refuses connections', () => 'http://127.0.0.1:1'],
] as const;

for (const dialect of testDialects()) {
  for (const [store, endpointOf] of STORES) {
    describe(`files on an S3 store that ${store} [${dialect}]`, () => {
      let silent: Awaited<ReturnType<typeof silentServer>>;
      let t: TestApp;
      before(async () => {
        silent = await silentServer();
        t = await buildTestApp(dialect, {
          deps: async (deps, config) => {
            await deps.blobs.close();
            deps.blobs = await createBlobStore({
              kind: 's3',
              bucket: 'files',
              region: 'us-east-1',
              endpoint: endpointOf(silent.endpoint),
              forcePathStyle: true,
              accessKeyId: 'key',
              secretAccessKey: 'secret',
              spoolDir: config.dataDir,
            });
          },
        });
      });
      after(async () => {
        await t.close();
        await silent.close();
      });

      test('complete answers 503 service_unavailable, and cancel answers', async () => {
        const { secret } = await seedWorkspace(t);
        const session = await createSession(t, secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: 5 });
        const done = await within(30_000, call(t, secret, 'POST', `/v1/files/${session.id}/complete`, {}));
        assert.notEqual(done, 'no answer', 'complete answered within 30 s');
        if (done === 'no answer') return;
        const error = assertError(done, 503, 'service_unavailable');
        assert.equal(done.headers['retry-after'], '1');
        assert.doesNotMatch(JSON.stringify(error), /127\.0\.0\.1|stack|S3/);
        const cancelled = await within(30_000, call(t, secret, 'POST', `/v1/files/${session.id}/cancel`, {}));
        assert.notEqual(cancelled, 'no answer', 'cancel answered within 30 s');
        if (cancelled === 'no answer') return;
        assert.equal(cancelled.statusCode, 200, cancelled.body);
        assert.equal(cancelled.json<{ status: string }>().status, 'CANCELLED');
      });
    });
  }
}
