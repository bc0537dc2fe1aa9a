// A COMPLETED file whose bytes were removed from the blob store by hand (a file deleted from
// DATA_DIR/blobs, an object from the bucket), as a client and an operator meet it
// (docs/files.md §Bytes missing from the store): GET and HEAD of the server's download address
// answer 409 `invalid_file_state` in the documented shape, never a 500 nor a HEAD of 200 whose GET
// fails; each refusal is one line at error naming the file; the bytes put
// back, the same address serves them again. On disk and on S3.
import assert from 'node:assert/strict';
import { rename, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { signToken } from '../../src/files/tokens.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { assertError, type Backend, backendDeps, uploadFile } from '../helpers/files.ts';

const blobKeyOf = async (t: TestApp, id: string) =>
  (await t.deps.db.kysely.selectFrom('files').select('blob_key').where('id', '=', id).executeTakeFirstOrThrow()).blob_key as string;

/** The lines logged at error that say a file's bytes are missing. */
function missingLines(t: TestApp): { level: number; fileId: string; blobKey: string; found: string }[] {
  return t
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { level: number; msg: string; fileId: string; blobKey: string; found: string })
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

    test('missing bytes answer 409 whatever the Range, If-Range or conditional headers, GET and HEAD alike', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const bytes = Buffer.from('a small file');
      const done = await uploadFile(t, s.secret, bytes, { filename: 'lost.txt', mimeType: 'text/plain' });
      const key = await blobKeyOf(t, done.id);
      const address = `/downloads/${signToken(t.config.signingSecret(), 'd', done.id, Date.now() + 600_000)}`;
      const whole = await t.app.inject({ method: 'GET', url: address });
      const etag = whole.headers.etag as string;
      const lastModified = whole.headers['last-modified'] as string;
      // Each of these is answered from the bytes while the store has them (the first two 416, the last 412).
      const cases: Record<string, string>[] = [
        { range: 'bytes=999999-' },
        { range: 'bytes=-0' },
        { range: 'bytes=0-3' },
        { range: 'bytes=5-2' },
        { range: 'bytes=0-1,4-5' },
        { range: 'bytes=0-3', 'if-range': '"not-the-etag"' },
        { range: 'bytes=999999-', 'if-range': '"not-the-etag"' },
        { range: 'bytes=999999-', 'if-range': etag },
        { 'if-none-match': etag },
        { 'if-modified-since': lastModified },
        { 'if-none-match': etag, range: 'bytes=999999-' },
        // A false If-Match is 412 while the bytes are there, 409 once they are missing.
        { 'if-match': '"not-the-etag"', range: 'bytes=0-3' },
      ];
      const before = missingLines(t).length;
      if (backend === 'disk') await rename(join(t.config.dataDir, 'blobs', `${key}.blob`), join(t.config.dataDir, 'lost.blob'));
      else await t.deps.blobs.delete(key);

      for (const headers of cases) {
        for (const method of ['GET', 'HEAD'] as const) {
          const res = await t.app.inject({ method, url: address, headers });
          const what = `${method} ${JSON.stringify(headers)}`;
          assert.equal(res.statusCode, 409, what);
          assert.equal(res.headers['x-should-retry'], 'false', what);
          assert.equal(res.headers['content-range'], undefined, what);
          if (method === 'GET') assert.match(assertError(res, 409, 'invalid_file_state').message, /bytes are missing/, what);
          else assert.equal(res.rawPayload.length, 0, what);
        }
      }
      assert.doesNotMatch(t.logs(), /unhandled error/);
      assert.equal(missingLines(t).length - before, cases.length * 2, 'one line at error for each refusal');

      // Put back, the same requests are answered from the bytes again.
      if (backend === 'disk') await rename(join(t.config.dataDir, 'lost.blob'), join(t.config.dataDir, 'blobs', `${key}.blob`));
      else await t.deps.blobs.put(key, Readable.from([bytes]), { maxBytes: bytes.length });
      const far = await t.app.inject({ method: 'GET', url: address, headers: { range: 'bytes=999999-' } });
      assertError(far, 416, 'range_not_satisfiable');
      assert.equal(far.headers['content-range'], `bytes */${bytes.length}`);
      assert.equal((await t.app.inject({ method: 'HEAD', url: address, headers: { range: 'bytes=999999-' } })).statusCode, 416);
      const cond = await t.app.inject({ method: 'GET', url: address, headers: { 'if-none-match': etag } });
      assert.equal(cond.statusCode, 200, 'no answer is a 304');
      assert.deepEqual(cond.rawPayload, bytes);
    });

    test('other bytes under the key than recorded (another size, a damaged disk blob) answer as missing ones, before any header', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const bytes = Buffer.from('0123456789abcdefghij');
      const done = await uploadFile(t, s.secret, bytes, { filename: 'cut.txt', mimeType: 'text/plain' });
      const key = await blobKeyOf(t, done.id);
      const address = `/downloads/${signToken(t.config.signingSecret(), 'd', done.id, Date.now() + 600_000)}`;
      const damages: [string, () => Promise<unknown>][] = [
        ['shorter', () => t.deps.blobs.put(key, Readable.from([bytes.subarray(0, 4)]), { maxBytes: bytes.length })],
        ['longer', () => t.deps.blobs.put(key, Readable.from([bytes, bytes]), { maxBytes: 2 * bytes.length })],
      ];
      // A blob file cut short: its bytes are there, the trailer that vouches for them is not.
      if (backend === 'disk') damages.push(['cut short', () => truncate(join(t.config.dataDir, 'blobs', `${key}.blob`), 10)]);
      for (const [what, damage] of damages) {
        await damage();
        const before = missingLines(t).length;
        for (const headers of [{}, { range: 'bytes=2-10' }, { range: 'bytes=0-1' }, { range: 'bytes=30-' }] as Record<string, string>[]) {
          for (const method of ['GET', 'HEAD'] as const) {
            const res = await t.app.inject({ method, url: address, headers });
            const label = `${what}: ${method} ${JSON.stringify(headers)}`;
            assert.equal(res.statusCode, 409, label);
            assert.equal(res.headers['x-should-retry'], 'false', label);
            if (method === 'GET') assert.match(assertError(res, 409, 'invalid_file_state').message, /bytes are missing/, label);
          }
        }
        assert.doesNotMatch(t.logs(), /unhandled error/);
        const lines = missingLines(t).slice(before);
        assert.equal(lines.length, 8, what);
        assert.ok(lines.every((l) => l.level === 50 && l.fileId === done.id && l.blobKey === key));
        if (what === 'shorter') assert.equal(lines[0]?.found, '4 bytes where 20 are recorded');
      }
      // The recorded bytes put back, the address serves them again.
      await t.deps.blobs.put(key, Readable.from([bytes]), { maxBytes: bytes.length });
      const got = await t.app.inject({ method: 'GET', url: address });
      assert.equal(got.statusCode, 200);
      assert.deepEqual(got.rawPayload, bytes);
    });
  };
}

for (const backend of ['disk', 's3'] as const) {
  eachDialect(`a file whose bytes the store lost (${backend})`, suite(backend), backendDeps(backend));
}
