// A download address handed out before a re-import replaced the file's bytes, on both blob
// backends: it still downloads until its expiresAt (docs/files.md §Who downloads the bytes). A
// local address names the file and serves its bytes; an S3 one names the bytes it was made for.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { filesEnv } from '../../src/files/service.ts';
import { runImport } from '../../src/import/run.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { type Backend, backendDeps, download } from '../helpers/files.ts';

const dir = mkdtempSync(join(tmpdir(), 'rolodex-import-address-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The stored objects of a workspace, on disk or in the s3rver's directory. */
function objects(t: TestApp, backend: Backend, workspaceId: string): string[] {
  const root = join(t.config.dataDir, backend === 'disk' ? 'blobs' : 's3rver/files/rolodex', workspaceId);
  try {
    return readdirSync(root).filter((n) => n.endsWith(backend === 'disk' ? '.blob' : '._S3rver_object'));
  } catch {
    return [];
  }
}

function suite(backend: Backend) {
  return (ctx: () => TestApp) => {
    test('an address handed out before a re-import replaced the bytes downloads until its expiresAt', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const line = (name: string, bytes: string) => {
        writeFileSync(join(dir, `${s.workspaceId}-${name}`), bytes);
        const path = join(dir, `${s.workspaceId}-${name}`);
        return JSON.stringify({ object: 'file', externalId: 'x', source: 'api', filename: 'x.txt', mimeType: 'text/plain', path });
      };
      const run = (text: string) =>
        runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), {
          kinds: importKinds({ blobs: t.deps.blobs, downloadTtlSeconds: t.config.downloadTtlSeconds }),
          text,
        });
      const id = (await run(line('old', 'the old bytes'))).ids.file?.x as string;
      const address = (await call(t, s.secret, 'GET', `/v1/files/${id}/url`)).json();
      await run(line('new', 'the new bytes!'));
      const sweep = (now: number) => sweepOnce({ db: t.deps.db.kysely, now, files: filesEnv(t.config, t.deps.blobs) });
      await sweep(Date.now());

      const got = await download(t, address.url);
      assert.equal(got.status, 200, got.bytes.toString());
      // The server's address serves the file as it is now; S3's the bytes it was signed for.
      assert.equal(got.bytes.toString(), backend === 'disk' ? 'the new bytes!' : 'the old bytes');
      const fresh = (await call(t, s.secret, 'GET', `/v1/files/${id}/url`)).json().url;
      assert.equal((await download(t, fresh)).bytes.toString(), 'the new bytes!');

      // Once no address to them can be valid, the old bytes go.
      await sweep(Date.parse(address.expiresAt) + 60_000);
      assert.equal(objects(t, backend, s.workspaceId).length, 1);
      assert.equal((await download(t, fresh)).bytes.toString(), 'the new bytes!');
    });
  };
}

for (const backend of ['disk', 's3'] as const) {
  eachDialect(`re-import and download addresses (${backend})`, suite(backend), backendDeps(backend));
}
