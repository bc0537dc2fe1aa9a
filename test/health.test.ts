// Liveness and readiness: /readyz proves the database and the blob store answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eachDialect } from './helpers/app.ts';

await eachDialect('health', (ctx) => {
  test('/healthz and /readyz answer 200 when everything is up', async () => {
    const t = ctx();
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready' });
  });
});

let blobsDown = false;
await eachDialect(
  'health with the blob store down',
  (ctx) => {
    test('/readyz is 503 service_unavailable while /healthz still answers', async () => {
      const t = ctx();
      blobsDown = true;
      try {
        const res = await t.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(res.statusCode, 503);
        assert.equal(res.json().error.code, 'service_unavailable');
        assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      } finally {
        blobsDown = false;
      }
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    });
  },
  {
    deps: (deps) => {
      const ping = deps.blobs.ping.bind(deps.blobs);
      deps.blobs.ping = async () => {
        if (blobsDown) throw new Error('blob store unreachable');
        return ping();
      };
    },
  },
);
