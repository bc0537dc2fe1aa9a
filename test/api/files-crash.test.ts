// A server killed with SIGKILL in the middle of PUTs restarts with every COMPLETED file's bytes
// matching its recorded size and MD5; interrupted uploads left the previous bytes (or none).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createKey } from '../../src/auth/service.ts';
import { createDiskBlobStore } from '../../src/blobs/disk.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createUser } from '../../src/users/service.ts';
import { createTestDb, testDialects, type TestDb } from '../helpers/db.ts';
import { startServerProcess, type ServerProcess } from '../helpers/process.ts';
import { systemCtx, operatorCtx } from '../../src/lib/context.ts';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const MB = 1024 * 1024;

async function api(base: string, secret: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as any };
}

async function put(url: string, bytes: Buffer): Promise<number> {
  const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: bytes });
  await res.arrayBuffer();
  return res.status;
}

/** Starts a slow chunked PUT; resolves once `atLeast` bytes have been written to the socket. */
function slowPut(url: string, total: number, atLeast: number): Promise<void> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
    req.on('error', () => {}); // the server dies under it
    let sent = 0;
    const chunk = Buffer.alloc(256 * 1024, 9);
    const tick = () => {
      if (req.destroyed || sent >= total) return;
      sent += chunk.length;
      req.write(chunk);
      if (sent >= atLeast) resolve();
      setTimeout(tick, 5);
    };
    tick();
  });
}

for (const dialect of testDialects()) {
  describe(`files survive SIGKILL mid-upload [${dialect}]`, () => {
    let tdb: TestDb;
    let server: ServerProcess | undefined;
    after(async () => {
      await server?.stop('SIGKILL');
      await tdb?.drop();
    });

    test('kill during PUTs, restart, check every COMPLETED file against its bytes', async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      const ws = await createWorkspace(systemCtx(db), { name: 'crash' });
      const user = await createUser(operatorCtx(db, ws.id), { email: 'c@example.test', role: 'admin' });
      const secret = (await createKey(operatorCtx(db, ws.id), { userId: user.id, scopes: null, expiresInMs: null })).secret;
      const env = { DATA_DIR: tdb.dataDir, SIGNING_SECRET: 's'.repeat(40), ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
      server = await startServerProcess(env);
      const base = server.baseUrl;

      const a = Buffer.alloc(3 * MB, 1);
      const v1 = Buffer.alloc(2 * MB, 2);
      const create = async (size: number) =>
        (await api(base, secret, 'POST', '/v1/files', { filename: 'x.bin', mimeType: 'application/octet-stream', sizeBytes: size })).json;
      const fa = await create(a.length);
      assert.equal(await put(fa.uploadUrl, a), 200);
      assert.equal((await api(base, secret, 'POST', `/v1/files/${fa.id}/complete`, { md5: md5(a) })).status, 200);
      const fb = await create(v1.length); // has v1, then a second PUT is cut off
      assert.equal(await put(fb.uploadUrl, v1), 200);
      const fc = await create(64 * MB); // its only PUT is cut off

      await Promise.all([slowPut(fb.uploadUrl, v1.length, MB), slowPut(fc.uploadUrl, 64 * MB, 8 * MB)]);
      assert.equal(await server.stop('SIGKILL'), null);

      server = await startServerProcess(env);
      const again = server.baseUrl;
      // B kept v1 whole; C has nothing.
      const cb = await api(again, secret, 'POST', `/v1/files/${fb.id}/complete`, { md5: md5(v1) });
      assert.equal(cb.status, 200, JSON.stringify(cb.json));
      const cc = await api(again, secret, 'POST', `/v1/files/${fc.id}/complete`);
      assert.equal(cc.status, 409);
      assert.equal(cc.json.error.code, 'upload_incomplete');

      const store = createDiskBlobStore(join(tdb.dataDir, 'blobs'));
      const completed = await db.selectFrom('files').selectAll().where('status', '=', 'COMPLETED').execute();
      assert.equal(completed.length, 2);
      for (const row of completed) {
        const hash = createHash('md5');
        let size = 0;
        for await (const chunk of await store.read(row.blob_key as string)) {
          size += (chunk as Buffer).length;
          hash.update(chunk as Buffer);
        }
        assert.equal(size, Number(row.size_bytes), row.id);
        assert.equal(hash.digest('hex'), row.md5, row.id);
      }
      // The interrupted session is still usable, and A downloads intact.
      const c = Buffer.alloc(64 * MB, 4);
      assert.equal(await put(fc.uploadUrl.replace(base, again), c), 200);
      assert.equal((await api(again, secret, 'POST', `/v1/files/${fc.id}/complete`, { md5: md5(c) })).status, 200);
      const url = (await api(again, secret, 'GET', `/v1/files/${fa.id}/url`)).json.url as string;
      const got = Buffer.from(await (await fetch(url)).arrayBuffer());
      assert.equal(md5(got), md5(a));
    });
  });
}
