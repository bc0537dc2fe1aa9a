// An upload or download address is valid until the `expiresAt` answered with it (docs/files.md
// §Addresses), on both databases and both blob stores: a token carries that expiry in
// milliseconds; a presigned S3 address is dated in whole seconds (X-Amz-Date) and lives whole
// seconds, so it ends less than a second after expiresAt, never before it (S3 refusing an
// address the API said was valid).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { type Backend, backendDeps, createSession, uploadFile } from '../helpers/files.ts';

/** When an address stops working: a token's expiry, or a presigned URL's date plus its lifetime. */
function addressEnd(url: string): number {
  const q = new URL(url).searchParams;
  const date = q.get('X-Amz-Date');
  if (date === null) return Number(new URL(url).pathname.split('.')[2]);
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  assert.ok(m, date);
  return Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`) + Number(q.get('X-Amz-Expires')) * 1000;
}

/** A token ends at expiresAt; a presigned URL at expiresAt or within the second after it. */
function validUntil(url: string, expiresAt: string, backend: Backend): void {
  const late = addressEnd(url) - Date.parse(expiresAt);
  if (backend === 'disk') assert.equal(late, 0, url);
  else assert.ok(late >= 0 && late < 1000, `${url} ends ${late} ms after ${expiresAt}`);
}

for (const backend of ['disk', 's3'] as Backend[]) {
  eachDialect(
    `address expiry (${backend})`,
    (ctx) => {
      test('uploadUrl and a download url are valid until the expiresAt answered with them, not a second longer', async () => {
        const t = ctx();
        const s = await seedWorkspace(t);
        for (let i = 0; i < 3; i++) {
          const session = await createSession(t, s.secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: 3 });
          validUntil(session.uploadUrl, session.expiresAt, backend);
          const read = (await call(t, s.secret, 'GET', `/v1/files/${session.id}`)).json();
          assert.equal(read.expiresAt, session.expiresAt);
          assert.equal(Date.parse(read.expiresAt) - Date.parse(read.createdAt), t.config.uploadTtlSeconds * 1000);
        }
        const file = await uploadFile(t, s.secret, Buffer.from('abc'));
        for (let i = 0; i < 3; i++) {
          const res = await call(t, s.secret, 'GET', `/v1/files/${file.id}/url`);
          assert.equal(res.statusCode, 200, res.body);
          const { url, expiresAt } = res.json<{ url: string; expiresAt: string }>();
          validUntil(url, expiresAt, backend);
        }
      });
    },
    backendDeps(backend),
  );
}
