// The upload address takes what S3's presigned PUT takes, on both blob backends (docs/files.md
// §Addresses): the Content-Type uploadHeaders names, compared as SigV4 compares it, and exactly
// sizeBytes bytes. Anything else is refused by both (the server in the error shape, S3 with its
// 403) and stores nothing. Over real HTTP, so that the field lines and chunked bodies are Node's.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { assertError, type Backend, backendDeps, createSession, md5 } from '../helpers/files.ts';

const TYPE = 'text/plain; charset=utf-8';
const bytes = Buffer.from('exactly the declared bytes');

interface Put {
  /** Headers, or field lines as name, value, name, value (to send one header twice). */
  headers: http.OutgoingHttpHeaders | readonly string[];
  /** The body; sent chunked (no Content-Length) when `chunked`. */
  body: Buffer;
  chunked?: boolean;
}

/** The address to PUT to: the server's own, on the port it listens on, or S3's presigned one. */
async function addressOf(t: TestApp, uploadUrl: string): Promise<string> {
  if (!uploadUrl.startsWith(t.config.publicBaseUrl + '/')) return uploadUrl;
  if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}${uploadUrl.slice(t.config.publicBaseUrl.length)}`;
}

async function put(t: TestApp, uploadUrl: string, p: Put) {
  const url = await addressOf(t, uploadUrl);
  return new Promise<{ statusCode: number; headers: Record<string, unknown>; body: string; json(): any }>((resolve, reject) => {
    // Field lines go out as given: Host among them, which Node adds only to a headers object.
    const headers = Array.isArray(p.headers) ? ['Host', new URL(url).host, ...p.headers] : p.headers;
    const req = http.request(url, { method: 'PUT', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ statusCode: res.statusCode as number, headers: res.headers, body, json: () => JSON.parse(body) }));
    });
    req.on('error', reject);
    if (p.chunked) Readable.from([p.body.subarray(0, 3), p.body.subarray(3)]).pipe(req);
    else req.end(p.body);
  });
}

const refused: [string, Put, { status: number; code: string; param?: string }][] = [
  ['no Content-Type', { headers: {}, body: bytes }, { status: 400, code: 'invalid_value', param: 'Content-Type' }],
  ['another type', { headers: { 'content-type': 'text/html' }, body: bytes }, { status: 400, code: 'invalid_value', param: 'Content-Type' }],
  ['the type without its parameter', { headers: { 'content-type': 'text/plain' }, body: bytes }, { status: 400, code: 'invalid_value', param: 'Content-Type' }],
  [
    'the type in other case',
    { headers: { 'content-type': 'Text/Plain; charset=UTF-8' }, body: bytes },
    { status: 400, code: 'invalid_value', param: 'Content-Type' },
  ],
  ['a shorter Content-Length', { headers: { 'content-type': TYPE }, body: bytes.subarray(1) }, { status: 400, code: 'invalid_value', param: 'Content-Length' }],
  ['a longer Content-Length', { headers: { 'content-type': TYPE }, body: Buffer.concat([bytes, bytes]) }, { status: 413, code: 'upload_too_large' }],
  [
    'a chunked body that ends short',
    { headers: { 'content-type': TYPE }, body: bytes.subarray(2), chunked: true },
    { status: 400, code: 'invalid_value', param: 'Content-Length' },
  ],
  [
    'a chunked body that runs over',
    { headers: { 'content-type': TYPE }, body: Buffer.concat([bytes, Buffer.from('!')]), chunked: true },
    { status: 413, code: 'upload_too_large' },
  ],
];

function suite(backend: Backend) {
  return (ctx: () => TestApp) => {
    test('a PUT with another Content-Type or another length than uploadHeaders and sizeBytes say is refused, nothing stored', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const f = await createSession(t, s.secret, { filename: 'a.txt', mimeType: TYPE, sizeBytes: bytes.length });
      assert.deepEqual(f.uploadHeaders, { 'content-type': TYPE });
      for (const [what, p, want] of refused) {
        const res = await put(t, f.uploadUrl, p);
        if (backend === 's3') assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
        else assert.equal(assertError(res, want.status, want.code, want.param).param, want.param, what);
        assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`), 409, 'upload_incomplete');
      }
      // What uploadHeaders says, with white space SigV4 does not count, and exactly sizeBytes.
      const ok = await put(t, f.uploadUrl, { headers: { 'content-type': `  text/plain;   charset=utf-8 ` }, body: bytes });
      assert.equal(ok.statusCode, 200, ok.body);
      const done = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(bytes) });
      assert.equal(done.statusCode, 200, done.body);
    });

    test('a refused PUT leaves the bytes uploaded before', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const f = await createSession(t, s.secret, { filename: 'b.txt', mimeType: TYPE, sizeBytes: bytes.length });
      assert.equal((await put(t, f.uploadUrl, { headers: f.uploadHeaders, body: bytes })).statusCode, 200);
      const other = Buffer.from(bytes.toString().toUpperCase());
      for (const p of [
        { headers: { 'content-type': 'application/octet-stream' }, body: other },
        { headers: f.uploadHeaders, body: other.subarray(1) },
      ]) {
        assert.equal((await put(t, f.uploadUrl, p)).statusCode, backend === 'disk' ? 400 : 403);
      }
      const done = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(bytes) });
      assert.equal(done.statusCode, 200, done.body);
    });

    if (backend === 'disk')
      test('the server: two Content-Type lines are refused; a chunked body of exactly sizeBytes is taken', async () => {
        const t = ctx();
        const s = await seedWorkspace(t);
        const f = await createSession(t, s.secret, { filename: 'c.txt', mimeType: TYPE, sizeBytes: bytes.length });
        const twice = await put(t, f.uploadUrl, { headers: ['Content-Type', TYPE, 'Content-Type', TYPE], body: bytes });
        assert.match(assertError(twice, 400, 'invalid_value', 'Content-Type').message, /more than one Content-Type/);
        const chunked = await put(t, f.uploadUrl, { headers: f.uploadHeaders, body: bytes, chunked: true });
        assert.equal(chunked.statusCode, 200, chunked.body);
        assert.equal((await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(bytes) })).statusCode, 200);
      });
  };
}

for (const backend of ['disk', 's3'] as const) {
  eachDialect(`upload headers (${backend})`, suite(backend), backendDeps(backend));
}
