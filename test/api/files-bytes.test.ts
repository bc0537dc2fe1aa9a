// The byte endpoints behind uploadUrl and download URLs (local disk): signed capabilities, the size
// guard, replacement, state checks, ranges, download headers and hostile filenames.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { signToken } from '../../src/files/tokens.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { assertError, createSession, download, md5, putBytes, uploadFile } from '../helpers/files.ts';

const pathOf = (t: TestApp, url: string) => url.slice(t.config.publicBaseUrl.length);
const rowOf = (t: TestApp, id: string) => t.deps.db.kysely.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** Every blob file (and temp file) of a workspace, or of all, under DATA_DIR/blobs. */
function blobFiles(t: TestApp, workspaceId = ''): string[] {
  const root = join(t.config.dataDir, 'blobs', workspaceId);
  const walk = (dir: string): string[] => {
    try {
      return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
    } catch {
      return [];
    }
  };
  return walk(root);
}

async function garbageCount(t: TestApp, workspaceId: string): Promise<number> {
  return (await t.deps.db.kysely.selectFrom('blob_garbage').select('blob_key').where('blob_key', 'like', `${workspaceId}/%`).execute()).length;
}

function flip(s: string, i: number): string {
  const c = s[i] as string;
  const r = c === 'a' ? 'b' : c === '0' ? '1' : /[0-9]/.test(c) ? '0' : 'a';
  return s.slice(0, i) + r + s.slice(i + 1);
}

eachDialect('file bytes (disk)', (ctx) => {
  test('tampered (one character), expired, or other-file upload tokens → 403 with nothing written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = await createSession(t, s.secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: 5 });
    const g = await createSession(t, s.secret, { filename: 'b.txt', mimeType: 'text/plain', sizeBytes: 5 });
    const token = pathOf(t, f.uploadUrl).slice('/uploads/'.length);
    const variants = new Set<string>();
    // Every position of the token: kind, file id, expiry, signature.
    for (let i = 0; i < token.length; i++) if (token[i] !== '.' && token[i] !== '_') variants.add(flip(token, i));
    variants.add(token.replace(f.id, g.id)); // the same capability presented for another file
    variants.add(signToken(t.config.signingSecret(), 'u', f.id, Date.now() - 1)); // expired
    variants.add(signToken(Buffer.from('x'.repeat(32)), 'u', f.id, Date.now() + 60_000)); // another server's secret
    variants.add(token.slice(0, -1));
    for (const v of variants) {
      const res = await t.app.inject({ method: 'PUT', url: `/uploads/${v}`, headers: { 'content-type': 'text/plain' }, payload: 'hello' });
      assertError(res, 403, 'invalid_upload_token');
    }
    assert.deepEqual(blobFiles(t, s.workspaceId), []);
    assert.equal(await garbageCount(t, s.workspaceId), 0);
    assert.equal((await rowOf(t, f.id)).blob_key, null);
    assert.equal((await rowOf(t, g.id)).blob_key, null);
    assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('hello'))).status, 200);
  });

  test('upload and download tokens are not interchangeable; tampered or expired download tokens → 403', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const done = await uploadFile(t, s.secret, Buffer.from('secret bytes'));
    const url = (await call(t, s.secret, 'GET', `/v1/files/${done.id}/url`)).json().url as string;
    const dtoken = pathOf(t, url).slice('/downloads/'.length);
    assert.equal((await download(t, url)).status, 200);
    const asUpload = await t.app.inject({ method: 'PUT', url: `/uploads/${dtoken}`, payload: 'x' });
    assert.equal(assertError(asUpload, 403, 'invalid_upload_token').message, 'This upload address is not an upload address.');
    const f = await createSession(t, s.secret, { filename: 'u', mimeType: 'text/plain', sizeBytes: 1 });
    const utoken = pathOf(t, f.uploadUrl).slice('/uploads/'.length);
    const asDownload = assertError(await t.app.inject({ method: 'GET', url: `/downloads/${utoken}` }), 403, 'invalid_download_token');
    assert.equal(asDownload.message, 'This download address is not a download address.');
    // The kind letter is covered by the signature too.
    assertError(await t.app.inject({ method: 'GET', url: `/downloads/d${utoken.slice(1)}` }), 403, 'invalid_download_token');
    for (const i of [0, 5, dtoken.indexOf('.', 5) + 3, dtoken.length - 2]) {
      assertError(await t.app.inject({ method: 'GET', url: `/downloads/${flip(dtoken, i)}` }), 403, 'invalid_download_token');
    }
    const expired = signToken(t.config.signingSecret(), 'd', done.id, Date.now() - 1);
    const e = assertError(await t.app.inject({ method: 'GET', url: `/downloads/${expired}` }), 403, 'invalid_download_token');
    assert.match(e.message, /expired/);
  });

  test('more bytes than sizeBytes → 413 and nothing stored; a declared Content-Length over it is refused before reading', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = await createSession(t, s.secret, { filename: 'big', mimeType: 'application/octet-stream', sizeBytes: 1000 });
    // No Content-Length: the guard stops the stream as the 1001st byte arrives.
    const res = await t.app.inject({
      method: 'PUT',
      url: pathOf(t, f.uploadUrl),
      headers: { ...f.uploadHeaders, 'transfer-encoding': 'chunked' },
      payload: Buffer.alloc(5000, 1),
    });
    assertError(res, 413, 'upload_too_large');
    const declared = await t.app.inject({
      method: 'PUT',
      url: pathOf(t, f.uploadUrl),
      headers: { ...f.uploadHeaders, 'content-length': '1001' },
      payload: Buffer.alloc(1001, 1),
    });
    assertError(declared, 413, 'upload_too_large');
    assert.deepEqual(blobFiles(t, s.workspaceId), []);
    assert.equal(await garbageCount(t, s.workspaceId), 0);
    assert.equal((await rowOf(t, f.id)).blob_key, null);
    assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`), 409, 'upload_incomplete');
    // Exactly sizeBytes is fine.
    assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.alloc(1000, 2))).status, 200);
    assert.equal((await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(Buffer.alloc(1000, 2)) })).statusCode, 200);
  });

  test('an oversize PUT does not replace bytes already uploaded', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const good = Buffer.from('0123456789');
    const f = await createSession(t, s.secret, { filename: 'k', mimeType: 'text/plain', sizeBytes: 10 });
    await putBytes(t, f.uploadUrl, f.uploadHeaders, good);
    const res = await t.app.inject({
      method: 'PUT',
      url: pathOf(t, f.uploadUrl),
      headers: { ...f.uploadHeaders, 'transfer-encoding': 'chunked' },
      payload: Buffer.alloc(11, 7),
    });
    assertError(res, 413, 'upload_too_large');
    assert.equal((await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(good) })).statusCode, 200);
  });

  test('a PUT with Content-Range (part of the bytes) → 400 and the bytes uploaded before stay (RFC 9110 §14.5)', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const good = Buffer.from('0123456789');
    const f = await createSession(t, s.secret, { filename: 'p', mimeType: 'text/plain', sizeBytes: 10 });
    await putBytes(t, f.uploadUrl, f.uploadHeaders, good);
    for (const contentRange of ['bytes 5-9/10', 'bytes 0-9/10', 'nonsense']) {
      const res = await t.app.inject({
        method: 'PUT',
        url: pathOf(t, f.uploadUrl),
        headers: { ...f.uploadHeaders, 'content-range': contentRange },
        payload: Buffer.from('56789'),
      });
      assertError(res, 400, 'invalid_value', 'Content-Range');
    }
    assert.equal(blobFiles(t, s.workspaceId).length, 1);
    assert.equal(await garbageCount(t, s.workspaceId), 0);
    assert.equal((await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(good) })).statusCode, 200);
  });

  test('a second PUT replaces the first, and the first bytes are deleted', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = await createSession(t, s.secret, { filename: 'r.txt', mimeType: 'text/plain', sizeBytes: 6 });
    const first = await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('first!'));
    assert.equal(first.status, 200);
    assert.deepEqual(first.json(), { sizeBytes: 6, md5: md5('first!') });
    assert.equal(first.headers.etag, `"${md5('first!')}"`);
    await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('second'));
    assert.equal(blobFiles(t, s.workspaceId).length, 1);
    assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5('first!') }), 422, 'checksum_mismatch');
    assert.equal((await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5('second') })).statusCode, 200);
    const url = (await call(t, s.secret, 'GET', `/v1/files/${f.id}/url`)).json().url;
    assert.equal((await download(t, url)).bytes.toString(), 'second');
    assert.equal(await garbageCount(t, s.workspaceId), 0);
  });

  test('a PUT to a file that is not PENDING → 409 invalid_file_state, bytes unchanged', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = await createSession(t, s.secret, { filename: 'p', mimeType: 'text/plain', sizeBytes: 3 });
    await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('one'));
    await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5('one') });
    assertError(await t.app.inject({ method: 'PUT', url: pathOf(t, f.uploadUrl), headers: f.uploadHeaders, payload: 'two' }), 409, 'invalid_file_state');
    const url = (await call(t, s.secret, 'GET', `/v1/files/${f.id}/url`)).json().url;
    assert.equal((await download(t, url)).bytes.toString(), 'one');
    const g = await createSession(t, s.secret, { filename: 'q', mimeType: 'text/plain', sizeBytes: 3 });
    await call(t, s.secret, 'POST', `/v1/files/${g.id}/cancel`);
    assertError(await t.app.inject({ method: 'PUT', url: pathOf(t, g.uploadUrl), headers: g.uploadHeaders, payload: 'two' }), 409, 'invalid_file_state');
    const h = await createSession(t, s.secret, { filename: 'r', mimeType: 'text/plain', sizeBytes: 3 });
    await t.deps.db.kysely
      .updateTable('files')
      .set({ expires_at: new Date(Date.now() - 1).toISOString() })
      .where('id', '=', h.id)
      .execute();
    assertError(await t.app.inject({ method: 'PUT', url: pathOf(t, h.uploadUrl), headers: h.uploadHeaders, payload: 'two' }), 409, 'invalid_file_state');
    assert.equal(blobFiles(t, s.workspaceId).length, 1);
  });

  test('downloads: attachment with filename*, nosniff, sandbox CSP, and byte ranges', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const bytes = Buffer.from('<html><script>alert(1)</script></html>');
    const done = await uploadFile(t, s.secret, bytes, { filename: 'page.html', mimeType: 'text/html' });
    const url = (await call(t, s.secret, 'GET', `/v1/files/${done.id}/url`)).json().url;
    const full = await download(t, url);
    assert.equal(full.status, 200);
    assert.ok(full.bytes.equals(bytes));
    assert.equal(full.headers['content-type'], 'text/html');
    assert.equal(full.headers['content-disposition'], 'attachment; filename="page.html"');
    assert.equal(full.headers['x-content-type-options'], 'nosniff');
    assert.match(String(full.headers['content-security-policy']), /sandbox/);
    assert.match(String(full.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(full.headers['accept-ranges'], 'bytes');
    assert.equal(full.headers['content-length'], String(bytes.length));
    const n = bytes.length;
    const cases: Array<[string, number, number]> = [
      ['bytes=0-5', 0, 5],
      ['bytes=6-', 6, n - 1],
      ['bytes=-7', n - 7, n - 1],
      ['bytes=3-3', 3, 3],
      ['bytes=10-100000', 10, n - 1],
      // The unit is case-insensitive, and a list may have spaces and empty elements (RFC 9110
      // §14.1, §5.6.1.2): still one range.
      ['Bytes=0-5', 0, 5],
      ['BYTES=-7', n - 7, n - 1],
      ['bytes= 2-4', 2, 4],
      ['bytes=2-4, ', 2, 4],
      ['bytes=,2-4', 2, 4],
    ];
    for (const [range, start, end] of cases) {
      const r = await download(t, url, { range });
      assert.equal(r.status, 206, range);
      assert.equal(r.headers['content-range'], `bytes ${start}-${end}/${n}`);
      assert.ok(r.bytes.equals(bytes.subarray(start, end + 1)), range);
    }
    const bad = await download(t, url, { range: `bytes=${n}-` });
    assert.equal(bad.status, 416);
    assert.equal(bad.json().error.code, 'range_not_satisfiable');
    assert.equal(bad.headers['content-range'], `bytes */${n}`);
    // Several ranges, or an If-Range for another version: the whole file.
    assert.equal((await download(t, url, { range: 'bytes=0-1,4-5' })).status, 200);
    // A range that ends before it starts is invalid, not unsatisfiable (RFC 9110 §14.1.1): ignored,
    // the whole file, wherever it lies.
    for (const range of ['bytes=5-2', `bytes=${n + 10}-${n + 1}`]) {
      const r = await download(t, url, { range });
      assert.equal(r.status, 200, range);
      assert.equal(r.headers['content-range'], undefined, range);
      assert.ok(r.bytes.equals(bytes), range);
    }
    assert.equal((await download(t, url, { range: 'bytes=0-1', 'if-range': '"0000"' })).status, 200);
    assert.equal((await download(t, url, { range: 'bytes=0-1', 'if-range': `"${md5(bytes)}"` })).status, 206);
    const head = await t.app.inject({ method: 'HEAD', url: pathOf(t, url) });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(n));
  });

  test('HEAD of a download answers the headers of the GET and reads no bytes', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const bytes = Buffer.from('0123456789abcdef');
    const done = await uploadFile(t, s.secret, bytes, { filename: 'h.txt', mimeType: 'text/plain' });
    const url = (await call(t, s.secret, 'GET', `/v1/files/${done.id}/url`)).json().url as string;
    const blobs = t.deps.blobs;
    const read = blobs.read.bind(blobs);
    let reads = 0;
    blobs.read = (...args) => {
      reads++;
      return read(...args);
    };
    try {
      for (const headers of [{}, { range: 'bytes=2-5' }] as Record<string, string>[]) {
        const get = await t.app.inject({ method: 'GET', url: pathOf(t, url), headers });
        const head = await t.app.inject({ method: 'HEAD', url: pathOf(t, url), headers });
        assert.equal(head.statusCode, get.statusCode);
        assert.equal(head.rawPayload.length, 0);
        for (const name of ['content-length', 'content-range', 'content-type', 'content-disposition', 'etag', 'x-content-type-options']) {
          assert.equal(head.headers[name], get.headers[name], name);
        }
      }
      assert.equal(reads, 2, 'only the GETs read the blob');
      const past = await t.app.inject({ method: 'HEAD', url: pathOf(t, url), headers: { range: 'bytes=99-' } });
      assert.equal(past.statusCode, 416);
      assert.equal(past.headers['content-range'], `bytes */${bytes.length}`);
    } finally {
      blobs.read = read;
    }
  });

  test('a stored type no header can carry (a row from before the ASCII rule) is served as octet-stream, not a 500', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const done = await uploadFile(t, s.secret, Buffer.from('bytes'), { mimeType: 'text/plain' });
    await t.deps.db.kysely.updateTable('files').set({ mime_type: 'text/plain; name="\u0101"' }).where('id', '=', done.id).execute();
    const url = (await call(t, s.secret, 'GET', `/v1/files/${done.id}/url`)).json().url as string;
    for (const headers of [{}, { range: 'bytes=1-2' }] as Record<string, string>[]) {
      const got = await download(t, url, headers);
      assert.equal(got.status, 'range' in headers ? 206 : 200);
      assert.equal(got.headers['content-type'], 'application/octet-stream');
      assert.equal(got.bytes.toString(), 'range' in headers ? 'yt' : 'bytes');
    }
  });

  test('hostile filenames (../, RTL marks, quotes, 255 characters) are stored as given and served safely; NUL is refused', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const names = ['../../etc/passwd', '..\\..\\boot.ini', 'invoice\u202Efdp.exe', 'a"b;c=d.txt', '\u00e9'.repeat(255), '\u{1F600}'.repeat(255), '..'];
    for (const name of names) {
      const done = await uploadFile(t, s.secret, Buffer.from('x'), { filename: name });
      const got = (await call(t, s.secret, 'GET', `/v1/files/${done.id}`)).json();
      assert.equal(got.filename, name);
      const url = (await call(t, s.secret, 'GET', `/v1/files/${done.id}/url`)).json().url;
      const cd = String((await download(t, url)).headers['content-disposition']);
      assert.match(cd, /^attachment; filename="[^"]*"(; filename\*=UTF-8''[A-Za-z0-9%!#$&+.^_`|~-]+)?$/, cd);
      const fallback = /filename="([^"]*)"/.exec(cd)?.[1] as string;
      assert.ok(!fallback.includes('/') && !fallback.includes('\\') && fallback !== '..', cd);
      const ext = /filename\*=UTF-8''(.*)$/.exec(cd)?.[1];
      if (ext) {
        const decoded = decodeURIComponent(ext);
        // eslint-disable-next-line no-control-regex
        assert.ok(!/[/\\\u202E\u0000]/.test(decoded), cd);
      }
    }
    // Blob paths never derive from the filename.
    for (const file of blobFiles(t, s.workspaceId)) assert.match(file, /\/ws_[0-9a-z]+\/fil_[0-9a-z]+-[0-9a-f]+\.blob$/);
    assertError(
      await call(t, s.secret, 'POST', '/v1/files', { filename: 'a\u0000.txt', mimeType: 'text/plain', sizeBytes: 1 }),
      400,
      'invalid_value',
      'filename',
    );
    assertError(
      await call(t, s.secret, 'POST', '/v1/files', { filename: 'x'.repeat(256), mimeType: 'text/plain', sizeBytes: 1 }),
      400,
      'invalid_value',
      'filename',
    );
  });

  test('over a real connection, an oversize stream gets its 413 while the client is still sending', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = await createSession(t, s.secret, { filename: 'big', mimeType: 'application/octet-stream', sizeBytes: 1024 * 1024 });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    let serverSide: Socket | undefined;
    t.app.server.once('connection', (socket: Socket) => (serverSide = socket));
    const chunk = Buffer.alloc(64 * 1024, 3);
    // Far more than the server may read (below) plus what the two sockets' kernel buffers hold.
    const TOTAL = 64 * 1024 * 1024;
    let sent = 0;
    const result = await new Promise<{ status: number; body: string; sent: number }>((resolve, reject) => {
      let answered = false;
      const req = http.request(
        { host: '127.0.0.1', port, method: 'PUT', path: pathOf(t, f.uploadUrl), headers: { 'content-type': 'application/octet-stream' } },
        (res) => {
          // Like curl: stop sending once the server has answered.
          answered = true;
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => {
            resolve({ status: res.statusCode as number, body, sent });
            req.destroy();
          });
        },
      );
      req.on('error', (err) => {
        if (!answered) reject(err);
      });
      // Up to TOTAL; stops as soon as the answer arrives.
      const pump = () => {
        while (sent < TOTAL && !req.destroyed && !answered) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    assert.equal(result.status, 413);
    assert.equal(JSON.parse(result.body).error.code, 'upload_too_large');
    assert.ok(result.sent < TOTAL, `the server read everything (${result.sent} bytes sent)`);
    // docs/files.md §Streaming: reading stops at the refusal, then at most 4 MB more are dropped.
    // The slack covers the socket's own buffer and the chunks in flight when the guard tripped.
    // Reading on while the refusal was prepared read 9–30 MiB here.
    const read = serverSide!.bytesRead;
    assert.ok(read <= 1024 * 1024 + 4 * 1024 * 1024 + 2 * 1024 * 1024, `the server read ${read} bytes of an upload of 1 MiB at most`);
    assert.deepEqual(blobFiles(t, s.workspaceId), []);
    assert.equal((await rowOf(t, f.id)).blob_key, null);
  });

  test('timeouts suit long uploads: no cap on a whole request, idle connections closed', async () => {
    const t = ctx();
    const server = t.app.server;
    assert.equal(server.requestTimeout, 0);
    assert.ok(server.timeout > 0 && server.timeout <= 120_000, `idle timeout ${server.timeout}`);
    assert.ok(server.headersTimeout > 0 && server.headersTimeout <= 60_000);
  });

  test('byte endpoints answer in the one error shape and need no API key', async () => {
    const t = ctx();
    const res = await t.app.inject({ method: 'PUT', url: '/uploads/garbage', payload: 'x' });
    const err = assertError(res, 403, 'invalid_upload_token');
    assert.equal(err.type, 'forbidden');
    assert.equal((await t.app.inject({ method: 'GET', url: '/downloads/garbage' })).json().error.type, 'forbidden');
  });

  test('a finished upload is counted in /metrics (bytes and duration)', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const before = await t.app.inject({ method: 'GET', url: '/metrics' });
    const read = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    await uploadFile(t, s.secret, Buffer.alloc(12345, 7));
    const after = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(read(after.body, 'rolodex_upload_bytes_total{storage="disk"}') - read(before.body, 'rolodex_upload_bytes_total{storage="disk"}'), 12345);
    assert.equal(
      read(after.body, 'rolodex_upload_duration_seconds_count{storage="disk"}') - read(before.body, 'rolodex_upload_duration_seconds_count{storage="disk"}'),
      1,
    );
  });
});
