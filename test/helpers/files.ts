// Helpers for the files suites: create sessions, send bytes to their uploadUrl (through inject for
// the server's own addresses, over real HTTP for presigned S3 ones), and fetch downloads.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createBlobStore } from '../../src/blobs/index.ts';
import type { BlobStore } from '../../src/blobs/blob-store.ts';
import type { Config } from '../../src/config.ts';
import type { Deps } from '../../src/http/context.ts';
import type { TestApp } from './app.ts';
import { call } from './app.ts';
import { ACCESS_KEY, startTestS3 } from './s3-server.ts';

export const md5 = (b: Buffer | string): string => createHash('md5').update(b).digest('hex');

export function assertError(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string, param?: string) {
  assert.equal(res.statusCode, status, res.statusCode === status ? '' : JSON.stringify(res.json()));
  const body = res.json();
  assert.equal(body.error.code, code);
  assert.equal(body.error.requestId, res.headers['x-request-id']);
  if (param !== undefined) assert.equal(body.error.param, param);
  return body.error;
}

export async function createSession(t: TestApp, secret: string, body: Record<string, unknown>) {
  const res = await call(t, secret, 'POST', '/v1/files', body);
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ id: string; uploadUrl: string; uploadHeaders: Record<string, string>; expiresAt: string; status: string; sizeBytes: number }>();
}

function localPath(t: TestApp, url: string): string | null {
  return url.startsWith(t.config.publicBaseUrl + '/') ? url.slice(t.config.publicBaseUrl.length) : null;
}

/** PUTs bytes to an uploadUrl; returns status and parsed body (JSON or S3 XML text). */
export async function putBytes(
  t: TestApp,
  url: string,
  headers: Record<string, string>,
  bytes: Buffer,
): Promise<{ status: number; json(): any; headers: Record<string, unknown>; body: string }> {
  const path = localPath(t, url);
  if (path) {
    const res = await t.app.inject({ method: 'PUT', url: path, headers: { ...headers, 'content-length': String(bytes.length) }, payload: bytes });
    return { status: res.statusCode, json: () => res.json(), headers: res.headers, body: res.body };
  }
  const res = await fetch(url, { method: 'PUT', headers: { ...headers, 'content-length': String(bytes.length) }, body: bytes });
  const text = await res.text();
  return { status: res.status, json: () => JSON.parse(text), headers: Object.fromEntries(res.headers), body: text };
}

export async function download(
  t: TestApp,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; bytes: Buffer; json(): any }> {
  const path = localPath(t, url);
  if (path) {
    const res = await t.app.inject({ method: 'GET', url: path, headers });
    return { status: res.statusCode, headers: res.headers, bytes: res.rawPayload, json: () => res.json() };
  }
  const res = await fetch(url, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: Object.fromEntries(res.headers), bytes, json: () => JSON.parse(bytes.toString()) };
}

/** create → PUT → complete; returns the completed file. */
export async function uploadFile(t: TestApp, secret: string, bytes: Buffer, extra: Record<string, unknown> = {}) {
  const s = await createSession(t, secret, { filename: 'f.bin', mimeType: 'application/octet-stream', sizeBytes: bytes.length, ...extra });
  const put = await putBytes(t, s.uploadUrl, s.uploadHeaders, bytes);
  assert.equal(put.status, 200, put.body);
  const done = await call(t, secret, 'POST', `/v1/files/${s.id}/complete`, { md5: md5(bytes) });
  assert.equal(done.statusCode, 200, done.body);
  return done.json<{ id: string; status: string; sizeBytes: number }>();
}

export type Backend = 'disk' | 's3';

/** TestAppOptions.deps for a backend: disk is the default; s3 swaps in a store on a fresh s3rver. */
export function backendDeps(backend: Backend): { deps?: (deps: Deps, config: Config) => Promise<void> } {
  if (backend === 'disk') return {};
  return {
    deps: async (deps, config) => {
      const s3 = await startTestS3(join(config.dataDir, 's3rver'), 'files');
      await deps.blobs.close();
      const store = await createBlobStore({
        kind: 's3',
        bucket: 'files',
        region: 'us-east-1',
        endpoint: s3.endpoint,
        forcePathStyle: true,
        accessKeyId: ACCESS_KEY,
        secretAccessKey: ACCESS_KEY,
        prefix: 'rolodex/',
        spoolDir: config.dataDir,
      });
      // The s3rver lives as long as the store.
      deps.blobs = Object.assign(Object.create(store) as BlobStore, {
        close: async () => {
          await store.close();
          await s3.close();
        },
      });
    },
  };
}
