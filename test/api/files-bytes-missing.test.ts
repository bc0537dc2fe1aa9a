// A COMPLETED file whose bytes were removed from the blob store by hand (a file deleted from
// DATA_DIR/blobs, an object from the bucket), as a client and an operator meet it
// (docs/files.md §Bytes missing from the store): GET and HEAD of the server's download address
// answer 409 `invalid_file_state` in the documented shape, never a 500 nor a HEAD of 200 whose GET
// fails; each refusal is one line at error naming the file; the bytes put
// back, the same address serves them again. On disk and on S3.
import assert from 'node:assert/strict';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { signToken } from '../../src/files/tokens.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { assertError, type Backend, backendDeps, uploadFile } from '../helpers/files.ts';

const blobKeyOf = async (t: TestApp, id: string) =>
  (await t.deps.db.kysely.selectFrom('files').select('blob_key').where('id', '=', id).executeTakeFirstOrThrow()).blob_key as string;

/** The lines logged at error that say a file's bytes are missing. */
function missingLines(t: TestApp): { level: number; fileId: string; blobKey: string }[] {
  return t
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { level: number; msg: string; fileId: string; blobKey: string })
    .filter((l) => l.msg.startsWith("a COMPLETED file's bytes are missing from the blob store"));
}

function suite(backend: Backend) {
  return (ctx: () => TestApp) => {
    test('the download address, GET and HEAD answer 409 invalid_file_state alike, logged at error; put back, the bytes are served', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const bytes = Buffer.from('bytes the store will lose');
      const done = await uploadFile(t, s.secret, bytes, { filename: 'lost.txt', mimeType: 'text/plain' });
      const key = await blobKeyOf(t, done.id);
      // The server's own address: the one /url answers on disk; on S3, whose address is the
      // store's, the server's route answers from the same store.
      const address = `/downloads/${signToken(t.config.signingSecret(), 'd', done.id, Date.now() + 600_000)}`;
      const before = missingLines(t).length;

      if (backend === 'disk') await rename(join(t.config.dataDir, 'blobs', `${key}.blob`), join(t.config.dataDir, 'lost.blob'));
      else await t.deps.blobs.delete(key);

      // The address is answered without asking the store (on S3 a request to the bucket on every
      // call); its downloads say what is wrong.
      assert.equal((await call(t, s.secret, 'GET', `/v1/files/${done.id}/url`)).statusCode, 200);
      for (const headers of [{}, { range: 'bytes=2-5' }] as Record<string, string>[]) {
        const get = await t.app.inject({ method: 'GET', url: address, headers });
        assert.match(assertError(get, 409, 'invalid_file_state').message, /bytes are missing/);
        assert.equal(get.headers['x-should-retry'], 'false');
        const head = await t.app.inject({ method: 'HEAD', url: address, headers });
        assert.equal(head.statusCode, 409, 'HEAD answers what GET answers');
        assert.equal(head.rawPayload.length, 0);
        assert.equal(head.headers['content-type'], get.headers['content-type']);
      }
      assert.doesNotMatch(t.logs(), /unhandled error/);
      const lines = missingLines(t).slice(before);
      assert.equal(lines.length, 4, 'one line for each refusal');
      for (const line of lines) {
        assert.equal(line.level, 50);
        assert.equal(line.fileId, done.id);
        assert.equal(line.blobKey, key);
      }

      if (backend === 'disk') await rename(join(t.config.dataDir, 'lost.blob'), join(t.config.dataDir, 'blobs', `${key}.blob`));
      else await t.deps.blobs.put(key, Readable.from([bytes]), { maxBytes: bytes.length });
      assert.equal((await call(t, s.secret, 'GET', `/v1/files/${done.id}/url`)).statusCode, 200);
      const got = await t.app.inject({ method: 'GET', url: address });
      assert.equal(got.statusCode, 200);
      assert.deepEqual(got.rawPayload, bytes);
      assert.equal((await t.app.inject({ method: 'HEAD', url: address })).statusCode, 200);
    });
  };
}

for (const backend of ['disk', 's3'] as const) {
  eachDialect(`a file whose bytes the store lost (${backend})`, suite(backend), backendDeps(backend));
}
