// A PUT to an uploadUrl after its file completed, on both blob backends: the file keeps exactly the
// bytes complete checked (docs/files.md §Addresses). On S3 the presigned PUT stays valid until the
// session deadline and S3 itself accepts it, so the completed file must not live under its key.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { filesEnv } from '../../src/files/service.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { assertError, type Backend, backendDeps, createSession, download, md5, putBytes } from '../helpers/files.ts';

/** The stored objects of a workspace, on disk or in the s3rver's directory. */
function objects(t: TestApp, backend: Backend, workspaceId: string): string[] {
  const root = join(t.config.dataDir, backend === 'disk' ? 'blobs' : 's3rver/files/rolodex', workspaceId);
  try {
    return readdirSync(root).filter((n) => n.endsWith(backend === 'disk' ? '.blob' : '._S3rver_object'));
  } catch {
    return [];
  }
}

const checked = Buffer.from('the checked bytes');
const other = Buffer.from('THE OTHER BYTES!!');

/** A file whose upload of `checked` is completed with its MD5. */
async function completed(t: TestApp) {
  const s = await seedWorkspace(t);
  const f = await createSession(t, s.secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: checked.length });
  assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, checked)).status, 200);
  const done = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(checked) });
  assert.equal(done.statusCode, 200, done.body);
  return { s, f, done };
}

function suite(backend: Backend) {
  return (ctx: () => TestApp) => {
    test('a PUT after complete never changes the bytes of the COMPLETED file, and leaves nothing behind', async () => {
      const t = ctx();
      const { s, f } = await completed(t);

      // The server refuses it; S3 cannot, but what it stores is no longer the file's.
      const late = await putBytes(t, f.uploadUrl, f.uploadHeaders, other);
      if (backend === 'disk') assert.equal(late.status, 409);
      const url = (await call(t, s.secret, 'GET', `/v1/files/${f.id}/url`)).json().url as string;
      const got = await download(t, url);
      assert.equal(got.status, 200);
      assert.equal(got.bytes.toString(), checked.toString());
      assert.equal(String(got.headers['etag']).replaceAll('"', ''), md5(checked));
      const again = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(checked) });
      assert.equal(again.statusCode, 200, again.body);

      // Once no presigned PUT can land any more, only the file's own object is left.
      const sweep = { db: t.deps.db.kysely, now: Date.parse(f.expiresAt) + 120_000, files: filesEnv(t.config, t.deps.blobs) };
      await sweepOnce(sweep);
      assert.equal(objects(t, backend, s.workspaceId).length, 1);
      assert.equal((await download(t, url)).bytes.toString(), checked.toString());
    });

    test('a complete of a COMPLETED file with an md5 its bytes do not have answers checksum_mismatch and changes nothing', async () => {
      const t = ctx();
      const { s, f, done } = await completed(t);

      // The client sends other bytes (S3 takes them) and completes again with their MD5: the file
      // does not hold them, and a 200 would say it does.
      await putBytes(t, f.uploadUrl, f.uploadHeaders, other);
      const again = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(other) });
      assertError(again, 422, 'checksum_mismatch', 'md5');
      assert.match(again.json().error.message, new RegExp(md5(checked)));
      const now = await call(t, s.secret, 'GET', `/v1/files/${f.id}`);
      assert.deepEqual(now.json(), done.json());
      // The retry of the complete that succeeded, and one without md5, still answer the file.
      for (const body of [{ md5: md5(checked) }, {}]) {
        const retry = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, body);
        assert.equal(retry.statusCode, 200, retry.body);
        assert.deepEqual(retry.json(), done.json());
      }
    });
  };
}

for (const backend of ['disk', 's3'] as const) {
  eachDialect(`late PUT (${backend})`, suite(backend), backendDeps(backend));
}
