// The contract between routes and the request pipeline: a /v1 route that does not declare its
// operation, scopes and rate category would skip authentication, so start-up refuses it; and
// buildApp leaves the dependencies it is given as they were.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { buildApp } from '../../src/app.ts';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { createDiskBlobStore } from '../../src/blobs/disk.ts';
import { loadConfig } from '../../src/config.ts';
import type { Deps } from '../../src/http/context.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDb } from '../helpers/db.ts';

const complete = { operation: 'testNaked', scopes: [], category: 'Read' } as const;

for (const missing of ['operation', 'scopes', 'category'] as const) {
  test(`a /v1 route without ${missing} fails start-up, naming the route and what it lacks`, async () => {
    const config = { ...complete, [missing]: undefined };
    await assert.rejects(
      buildTestApp('sqlite', { routes: (app) => app.get('/v1/test/naked', { config }, async () => ({ ok: true })) }),
      (err: Error) => err.message.includes('GET /v1/test/naked') && err.message.includes(`does not declare ${missing}`),
    );
  });
}

test('routes outside /v1 (health, docs, byte endpoints) need no declaration; a complete /v1 route starts', async () => {
  const t = await buildTestApp('sqlite', {
    routes: (app) => {
      app.get('/internal/ping', async () => ({ ok: true }));
      app.get('/v1/test/declared', { config: complete }, async () => ({ ok: true }));
    },
  });
  try {
    assert.equal((await t.app.inject({ method: 'GET', url: '/internal/ping' })).statusCode, 200);
    // Declared, so the pipeline guards it: no key, no answer.
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/test/declared' })).statusCode, 401);
  } finally {
    await t.close();
  }
});

test('buildApp does not change the dependencies it is given', async () => {
  const tdb = await createTestDb('sqlite');
  const config = loadConfig({ DATA_DIR: tdb.dataDir, LOG_LEVEL: 'silent', SIGNING_SECRET: 'x'.repeat(32) });
  const deps: Deps = { db: tdb.db, logger: pino({ level: 'silent' }), auth: new Authenticator(tdb.db), blobs: createDiskBlobStore(join(tdb.dataDir, 'blobs')) };
  const before = { ...deps };
  const app = await buildApp(config, deps);
  try {
    assert.deepEqual(Object.keys(deps).sort(), Object.keys(before).sort());
    for (const k of Object.keys(before) as Array<keyof Deps>) assert.equal(deps[k], before[k], k);
    assert.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200, 'metrics made for the app');
  } finally {
    await app.close();
    await deps.blobs.close();
    await tdb.drop();
  }
});
