// Liveness and readiness: /readyz proves the database and the blob store answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Gate } from '../../src/db/gate.ts';
import { eachDialect } from '../helpers/app.ts';

eachDialect('health', (ctx) => {
  test('/healthz and /readyz answer 200 when everything is up', async () => {
    const t = ctx();
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready' });
  });
});

let blobsDown = false;
eachDialect(
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

// docs/deploy.md §Probes: readiness never hangs; liveness sees a stalled pool but not a database that is down.
let stalledMs = 0;
let blobsHang = false;
eachDialect(
  'probes with deadlines',
  (ctx) => {
    test('/readyz answers 503 within READINESS_TIMEOUT_MS when a dependency does not answer at all', async () => {
      const t = ctx();
      blobsHang = true;
      try {
        const res = await t.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(res.statusCode, 503);
        assert.equal(res.json().error.code, 'service_unavailable');
        assert.equal(res.headers['retry-after'], '1');
      } finally {
        blobsHang = false;
      }
    });

    test('/healthz fails while a transaction has waited longer than LIVENESS_STALL_MS for a connection, and passes again after', async () => {
      const t = ctx();
      stalledMs = 5000;
      try {
        const res = await t.app.inject({ method: 'GET', url: '/healthz' });
        assert.equal(res.statusCode, 503);
        assert.equal(res.json().error.code, 'service_unavailable');
      } finally {
        stalledMs = 0;
      }
      assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    });
  },
  {
    env: { READINESS_TIMEOUT_MS: '200', LIVENESS_STALL_MS: '1000' },
    deps: (deps) => {
      deps.blobs.ping = () => (blobsHang ? new Promise<void>(() => {}) : Promise.resolve());
      deps.db = {
        ...deps.db,
        pool: { size: 2, transactionSlots: 1, transactions: () => 1, waiting: () => (stalledMs ? 1 : 0), oldestWaitMs: () => stalledMs },
      };
    },
  },
);

test('a transaction waiting for a place longer than its deadline fails as a missed deadline and leaves the line', async () => {
  const gate = new Gate(1);
  await gate.enter();
  await assert.rejects(gate.enter(50), { code: 'DATABASE_DEADLINE' });
  assert.equal(gate.waiting, 0);
  gate.leave();
  await gate.enter(50);
  gate.leave();
});
