// x-should-retry (docs/errors.md §Retrying): generated clients retry every 409 unless told not to.
// A conflict a retry cannot change says `x-should-retry: false`; idempotency_conflict (and the
// other retryable answers) never does.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { AppError, ERROR_CODES, type ErrorCode, RETRYABLE } from '../../src/lib/errors.ts';
import { fingerprintOf } from '../../src/http/idempotency.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { assertError, createSession, md5, putBytes } from '../helpers/files.ts';
import { loadDocument } from '../helpers/openapi-ops.ts';

function final(res: { headers: Record<string, unknown> }) {
  assert.equal(res.headers['x-should-retry'], 'false');
}

function retryable(res: { headers: Record<string, unknown> }) {
  assert.equal(res.headers['x-should-retry'], undefined);
}

test('every code of a status clients retry (409, 429, 5xx) has a retry decision, and docs/errors.md states each', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Retrying'), doc.indexOf('\n## ', doc.indexOf('## Retrying') + 1));
  // A bullet with its continuation lines, up to the next bullet.
  const bullet = (label: string) => section.split(/\n(?=- )/).find((b) => b.startsWith(`- ${label}`)) ?? '';
  const listed = (label: string) => [...bullet(label).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
  for (const [code, status] of Object.entries(ERROR_CODES)) {
    if (status !== 409 && status !== 429 && status < 500) continue;
    const decision = (RETRYABLE as Record<string, boolean | undefined>)[code];
    assert.equal(typeof decision, 'boolean', `${code} has no retry decision`);
    assert.ok(
      listed(decision ? 'Retryable' : 'Not retryable').includes(code),
      `docs/errors.md §Retrying does not list ${code} as ${decision ? '' : 'not '}retryable`,
    );
  }
  // The headers follow the decision wherever the error is made.
  for (const [code, retry] of Object.entries(RETRYABLE)) {
    assert.equal(new AppError(code as ErrorCode, 'x').headers['x-should-retry'], retry ? undefined : 'false', code);
  }
  assert.equal(new AppError('invalid_value', 'x').headers['x-should-retry'], undefined);
});

eachDialect('retry hints', (ctx) => {
  test('invalid_file_state and upload_incomplete say x-should-retry: false, on the API and the byte endpoint', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = await createSession(t, s.secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: 3 });
    const incomplete = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, {});
    assertError(incomplete, 409, 'upload_incomplete');
    final(incomplete);
    assert.equal((await call(t, s.secret, 'POST', `/v1/files/${f.id}/cancel`, {})).statusCode, 200);
    const again = await call(t, s.secret, 'POST', `/v1/files/${f.id}/cancel`, {});
    assertError(again, 409, 'invalid_file_state');
    final(again);
    const put = await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('abc'));
    assert.equal(put.status, 409);
    assert.equal(put.json().error.code, 'invalid_file_state');
    final(put);
    const url = await call(t, s.secret, 'GET', `/v1/files/${f.id}/url`);
    assertError(url, 409, 'invalid_file_state');
    final(url);
  });

  test('idempotency_conflict carries Retry-After and no x-should-retry; nor do other errors or successes', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    // A claim held by a running request, as the database shows it to a second one.
    const body = { fields: { $name: 'racing', $objectType: 'account' } };
    const now = new Date().toISOString();
    await t.deps.db.kysely
      .insertInto('idempotency_keys')
      .values({
        workspace_id: s.workspaceId,
        operation: 'createList',
        key: 'held',
        fingerprint: fingerprintOf('POST', '/v1/lists', { subjectType: 'user', userId: s.userId }, body),
        state: 'pending',
        status_code: null,
        body: null,
        locked_at: now,
        created_at: now,
      })
      .execute();
    const conflict = await call(t, s.secret, 'POST', '/v1/lists', body, { 'idempotency-key': 'held' });
    assertError(conflict, 409, 'idempotency_conflict');
    assert.equal(conflict.headers['retry-after'], '1');
    retryable(conflict);
    const bad = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: '', $objectType: 'account' } });
    assertError(bad, 400, 'invalid_value');
    retryable(bad);
    const ok = await call(t, s.secret, 'GET', '/v1/lists');
    assert.equal(ok.statusCode, 200);
    retryable(ok);
    const f = await createSession(t, s.secret, { filename: 'b.txt', mimeType: 'text/plain', sizeBytes: 2 });
    await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('hi'));
    const mismatch = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5('other') });
    assertError(mismatch, 422, 'checksum_mismatch');
    retryable(mismatch);
  });

  test('the OpenAPI document shows x-should-retry on the 409s that carry it', async () => {
    const doc = await loadDocument(ctx());
    const headersOf = (path: string, method: string) => doc.paths[path][method].responses['409']?.headers ?? {};
    assert.ok(headersOf('/v1/files/{id}/complete', 'post')['x-should-retry'], 'completeFile 409');
    assert.ok(headersOf('/v1/files/{id}/url', 'get')['x-should-retry'], 'getFileUrl 409');
    assert.equal(headersOf('/v1/lists', 'post')['x-should-retry'], undefined, 'createList: only idempotency_conflict');
    assert.ok(headersOf('/v1/lists', 'post')['Retry-After']);
  });
});
