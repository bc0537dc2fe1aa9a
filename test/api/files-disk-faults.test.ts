// A local blob directory the machine refuses, as a client and an operator meet it
// (docs/reliability.md §Blob store): a full disk under an upload, a blob this process may not read
// under a complete and a download. Each answers 503 service_unavailable in the documented shape,
// never 409 `upload_incomplete` (the client's bytes were fine) nor 500, naming no path; the log
// says at error what to mend; once mended, the same calls succeed without a restart.
//
// The faults are real errors of the file system where the tests can make them whatever the user
// running them: writes go to /dev/full (ENOSPC), and opening a blob fails with EACCES, patched
// into node:fs for the blob directory only (syncBuiltinESMExports carries the patch to the store's
// ESM imports) and taken back after each test.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { assertError, createSession, download, md5, putBytes } from '../helpers/files.ts';

const original = { createWriteStream: fs.createWriteStream, open: fsp.open };

/** Makes the file system refuse the paths under `dir`: writes fail ENOSPC, or opens EACCES. */
function refuse(dir: string, how: 'full' | 'unreadable'): void {
  const under = (p: unknown) => String(p).startsWith(dir);
  if (how === 'full') {
    fs.createWriteStream = ((p: fs.PathLike, opts?: Record<string, unknown>) =>
      under(p) ? original.createWriteStream('/dev/full', { ...opts, flags: 'w' }) : original.createWriteStream(p, opts)) as typeof fs.createWriteStream;
  } else {
    fsp.open = async (p, flags, mode) => {
      if (under(p)) throw Object.assign(new Error(`EACCES: permission denied, open '${String(p)}'`), { code: 'EACCES', syscall: 'open', path: String(p) });
      return original.open(p, flags, mode);
    };
  }
  syncBuiltinESMExports();
}

function mend(): void {
  fs.createWriteStream = original.createWriteStream;
  fsp.open = original.open;
  syncBuiltinESMExports();
}

function assertUnavailable(res: { statusCode: number; headers: Record<string, unknown>; json(): any }): void {
  const error = assertError(res, 503, 'service_unavailable');
  assert.equal(res.headers['retry-after'], '1');
  assert.doesNotMatch(JSON.stringify(error), /blobs|EACCES|ENOSPC|stack|\//);
}

for (const dialect of testDialects()) {
  describe(`files on a blob directory the machine refuses [${dialect}]`, () => {
    let t: TestApp;
    let blobs: string;
    before(async () => {
      t = await buildTestApp(dialect);
      blobs = join(t.config.dataDir, 'blobs');
    });
    afterEach(mend);
    after(() => t.close());

    test('a full disk under an upload: 503 and an error line, then the same PUT succeeds', async () => {
      const { secret } = await seedWorkspace(t);
      const bytes = Buffer.alloc(200_000, 7);
      const s = await createSession(t, secret, { filename: 'a.bin', mimeType: 'application/octet-stream', sizeBytes: bytes.length });
      refuse(blobs, 'full');
      const put = await putBytes(t, s.uploadUrl, s.uploadHeaders, bytes);
      assertUnavailable({ statusCode: put.status, headers: put.headers, json: () => put.json() });
      const logged = t
        .logs()
        .split('\n')
        .filter((l) => l.includes('its disk is full'));
      assert.equal(logged.length, 1, t.logs().slice(-2000));
      assert.equal(JSON.parse(logged[0]!).level, 50);
      mend();
      const again = await putBytes(t, s.uploadUrl, s.uploadHeaders, bytes);
      assert.equal(again.status, 200, again.body);
      const done = await call(t, secret, 'POST', `/v1/files/${s.id}/complete`, { md5: md5(bytes) });
      assert.equal(done.statusCode, 200, done.body);
    });

    test('a blob this process may not read: complete and download answer 503, then succeed', async () => {
      const { secret } = await seedWorkspace(t);
      const bytes = Buffer.from('hello');
      const s = await createSession(t, secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: bytes.length });
      assert.equal((await putBytes(t, s.uploadUrl, s.uploadHeaders, bytes)).status, 200);

      refuse(blobs, 'unreadable');
      assertUnavailable(await call(t, secret, 'POST', `/v1/files/${s.id}/complete`, {}));
      mend();
      assert.equal((await call(t, secret, 'POST', `/v1/files/${s.id}/complete`, {})).statusCode, 200);

      const url = (await call(t, secret, 'GET', `/v1/files/${s.id}/url`)).json<{ url: string }>().url;
      refuse(blobs, 'unreadable');
      const refused = await download(t, url);
      assertUnavailable({ statusCode: refused.status, headers: refused.headers, json: () => refused.json() });
      const said = t
        .logs()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg: string; reason?: string });
      assert.ok(
        said.some((l) => l.msg.startsWith('the blob directory cannot be used;') && /this process may not use it/.test(l.reason ?? '')),
        t.logs().slice(-2000),
      );
      mend();
      const got = await download(t, url);
      assert.equal(got.status, 200);
      assert.deepEqual(got.bytes, bytes);
    });
  });
}
