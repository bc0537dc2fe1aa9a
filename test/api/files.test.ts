// The file state table and docs/design.md §Files through the public API, on both databases and both
// blob backends: every transition and refusal with its status and code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, keyFor, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { assertError, type Backend, backendDeps, createSession, download, md5, putBytes, uploadFile } from '../helpers/files.ts';
import { filesEnv } from '../../src/files/service.ts';
import { newestFirst } from '../helpers/order.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { listKnowledge } from '../../src/knowledge/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';

const MB = 1024 * 1024;
const FILE_KEYS = ['completedAt', 'createdAt', 'expiresAt', 'filename', 'id', 'mimeType', 'sizeBytes', 'status'];

const sweepAt = (t: TestApp, now: number) => sweepOnce({ db: t.deps.db.kysely, now, files: filesEnv(t.config, t.deps.blobs) });
const rowOf = (t: TestApp, id: string) => t.deps.db.kysely.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function expire(t: TestApp, id: string): Promise<void> {
  await t.deps.db.kysely
    .updateTable('files')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('id', '=', id)
    .execute();
}

function suite(backend: Backend) {
  return (ctx: () => TestApp) => {
    test('create opens a PENDING session with an upload address, and never returns the purpose', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const before = Date.now();
      const res = await call(t, s.secret, 'POST', '/v1/files', {
        filename: 'notes.md',
        mimeType: 'text/markdown',
        sizeBytes: 12,
        purpose: 'meeting_transcript',
      });
      assert.equal(res.statusCode, 200, res.body);
      const f = res.json();
      assert.deepEqual(Object.keys(f).sort(), [...FILE_KEYS, 'uploadHeaders', 'uploadUrl'].sort());
      assert.match(f.id, /^fil_[0-9a-z]{26}$/);
      assert.equal(f.status, 'PENDING');
      assert.equal(f.completedAt, null);
      assert.equal(f.sizeBytes, 12);
      const ttl = Date.parse(f.expiresAt) - Date.parse(f.createdAt);
      assert.equal(ttl, 3600_000);
      assert.ok(Date.parse(f.createdAt) >= before - 5);
      assert.equal(f.uploadHeaders['content-type'], 'text/markdown');
      assert.match(f.uploadUrl, backend === 'disk' ? /^http:\/\/rolodex\.test\/uploads\// : /X-Amz-Signature=/);
      const got = (await call(t, s.secret, 'GET', `/v1/files/${f.id}`)).json();
      assert.deepEqual(Object.keys(got).sort(), FILE_KEYS);
      assert.equal(got.status, 'PENDING');
    });

    test('create validates filename, mimeType and sizeBytes', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const ok = { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: 10 };
      const cases: Array<[Record<string, unknown>, number, string, string | undefined]> = [
        [{ mimeType: 'text/plain', sizeBytes: 1 }, 400, 'parameter_missing', 'filename'],
        [{ ...ok, filename: '' }, 400, 'invalid_value', 'filename'],
        [{ ...ok, filename: 'x'.repeat(256) }, 400, 'invalid_value', 'filename'],
        [{ ...ok, filename: 'a\u0000b.txt' }, 400, 'invalid_value', 'filename'],
        [{ ...ok, filename: 'line\nbreak' }, 400, 'invalid_value', 'filename'],
        [{ ...ok, mimeType: 'textplain' }, 400, 'invalid_value', 'mimeType'],
        [{ ...ok, mimeType: 'text/pl ain' }, 400, 'invalid_value', 'mimeType'],
        // Served back as a Content-Type header, which cannot carry these characters.
        [{ ...ok, mimeType: 'text/plain; name="\u0101"' }, 400, 'invalid_value', 'mimeType'],
        [{ ...ok, mimeType: 'text/plain; name="\u{1F4C4}.txt"' }, 400, 'invalid_value', 'mimeType'],
        [{ ...ok, sizeBytes: 0 }, 400, 'invalid_value', 'sizeBytes'],
        [{ ...ok, sizeBytes: 1.5 }, 400, 'invalid_type', 'sizeBytes'],
        [{ ...ok, sizeBytes: '10' }, 400, 'invalid_type', 'sizeBytes'],
        [{ ...ok, sizeBytes: 512 * MB + 1 }, 400, 'file_too_large', 'sizeBytes'],
        [{ ...ok, purpose: 'avatar' }, 400, 'invalid_value', 'purpose'],
        [{ ...ok, colour: 'red' }, 400, 'unknown_field', 'colour'],
      ];
      for (const [body, status, code, param] of cases) assertError(await call(t, s.secret, 'POST', '/v1/files', body), status, code, param);
      assert.equal((await call(t, s.secret, 'POST', '/v1/files', { ...ok, sizeBytes: 512 * MB })).statusCode, 200);
      assert.equal((await call(t, s.secret, 'POST', '/v1/files', { ...ok, mimeType: 'Text/Plain; charset=utf-8' })).statusCode, 200);
      assert.equal((await call(t, s.secret, 'POST', '/v1/files', { ...ok, mimeType: 'text/plain; name="Q1 [draft].txt"' })).statusCode, 200);
      const listed = (await call(t, s.secret, 'GET', '/v1/files')).json();
      assert.equal(listed.totalCount, 3, 'refused creates leave nothing');
    });

    test('purpose rules: MIME types, ceilings and who may add to which Knowledge', async () => {
      const t = ctx();
      const s = await seedWorkspace(t, { role: 'member' });
      const admin = await seedWorkspace(t, { role: 'admin' });
      const wsKey = await keyFor(t, s.workspaceId, null);
      const create = (secret: string, body: Record<string, unknown>) => call(t, secret, 'POST', '/v1/files', { filename: 'x', sizeBytes: 10, ...body });
      const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
      const xlsx = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
      assert.equal((await create(s.secret, { mimeType: 'text/vtt', purpose: 'meeting_transcript' })).statusCode, 200);
      assert.equal((await create(s.secret, { mimeType: docx, purpose: 'meeting_transcript' })).statusCode, 200);
      assertError(await create(s.secret, { mimeType: 'image/png', purpose: 'meeting_transcript' }), 400, 'mime_type_not_allowed', 'mimeType');
      assertError(await create(s.secret, { mimeType: xlsx, purpose: 'meeting_transcript' }), 400, 'mime_type_not_allowed', 'mimeType');
      assertError(
        await create(s.secret, { mimeType: 'text/plain', purpose: 'meeting_transcript', sizeBytes: 50 * MB + 1 }),
        400,
        'file_too_large',
        'sizeBytes',
      );
      assert.equal((await create(s.secret, { mimeType: 'text/plain', purpose: 'meeting_transcript', sizeBytes: 50 * MB })).statusCode, 200);
      assert.equal((await create(s.secret, { mimeType: xlsx, purpose: 'knowledge_user' })).statusCode, 200);
      assert.equal((await create(s.secret, { mimeType: 'text/csv', purpose: 'knowledge_user', sizeBytes: 100 * MB })).statusCode, 200);
      assertError(await create(s.secret, { mimeType: 'text/csv', purpose: 'knowledge_user', sizeBytes: 100 * MB + 1 }), 400, 'file_too_large', 'sizeBytes');
      assertError(await create(s.secret, { mimeType: 'text/vtt', purpose: 'knowledge_user' }), 400, 'mime_type_not_allowed', 'mimeType');
      assertError(await create(wsKey, { mimeType: 'text/plain', purpose: 'knowledge_user' }), 403, 'user_required', 'purpose');
      assertError(await create(s.secret, { mimeType: 'text/plain', purpose: 'knowledge_workspace' }), 403, 'admin_required', 'purpose');
      assert.equal((await create(admin.secret, { mimeType: 'text/plain', purpose: 'knowledge_workspace' })).statusCode, 200);
      assert.equal((await create(wsKey, { mimeType: 'text/plain', purpose: 'knowledge_workspace' })).statusCode, 200);
      assert.equal((await create(s.secret, { mimeType: 'image/png', sizeBytes: 512 * MB })).statusCode, 200);
    });

    test('complete: missing or short bytes → upload_incomplete, wrong md5 → checksum_mismatch, both stay PENDING; a correct retry completes', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const bytes = Buffer.from('hello, rolodex files!');
      const f = await createSession(t, s.secret, { filename: 'h.txt', mimeType: 'text/plain', sizeBytes: bytes.length });
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`), 409, 'upload_incomplete');
      assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, bytes.subarray(0, 5))).status, backend === 'disk' ? 400 : 403);
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, {}), 409, 'upload_incomplete');
      // An optional body is absent or an object: null is not an absent body (docs/errors.md §Request bodies).
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, null), 400, 'invalid_type');
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/cancel`, null), 400, 'invalid_type');
      assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, bytes)).status, 200);
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5('other') }), 422, 'checksum_mismatch', 'md5');
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(bytes).toUpperCase() }), 400, 'invalid_value', 'md5');
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(bytes), extra: 1 }), 400, 'unknown_field', 'extra');
      assert.equal((await call(t, s.secret, 'GET', `/v1/files/${f.id}`)).json().status, 'PENDING');
      const done = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(bytes) });
      assert.equal(done.statusCode, 200, done.body);
      const c = done.json();
      assert.deepEqual(Object.keys(c).sort(), FILE_KEYS);
      assert.equal(c.status, 'COMPLETED');
      assert.equal(c.expiresAt, null);
      assert.ok(Date.parse(c.completedAt) >= Date.parse(c.createdAt));
      assert.equal(c.sizeBytes, bytes.length);
      // Safe retry: unchanged, with or without a body.
      const again = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`);
      assert.equal(again.statusCode, 200);
      assert.deepEqual(again.json(), c);
      assert.equal((await rowOf(t, f.id)).md5, md5(bytes));
    });

    test('a complete whose file is cancelled while it reads the bytes answers invalid_file_state', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const bytes = Buffer.from('racing bytes');
      const f = await createSession(t, s.secret, { filename: 'r.txt', mimeType: 'text/plain', sizeBytes: bytes.length });
      assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, bytes)).status, 200);
      // The cancel lands after complete read the row as PENDING and before it reads the bytes.
      const blobs = t.deps.blobs;
      const stat = blobs.stat.bind(blobs);
      let cancelled = 0;
      blobs.stat = async (key) => {
        blobs.stat = stat;
        cancelled = (await call(t, s.secret, 'POST', `/v1/files/${f.id}/cancel`)).statusCode;
        return stat(key);
      };
      try {
        const done = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(bytes) });
        assert.equal(cancelled, 200);
        assertError(done, 409, 'invalid_file_state');
      } finally {
        blobs.stat = stat;
      }
      assert.equal((await call(t, s.secret, 'GET', `/v1/files/${f.id}`)).json().status, 'CANCELLED');
    });

    test('a stored type no header can carry (a row from before the ASCII rule) downloads as octet-stream', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const done = await uploadFile(t, s.secret, Buffer.from('bytes'), { mimeType: 'text/plain' });
      await t.deps.db.kysely.updateTable('files').set({ mime_type: 'text/plain; name="\u0101"' }).where('id', '=', done.id).execute();
      const got = await download(t, (await call(t, s.secret, 'GET', `/v1/files/${done.id}/url`)).json().url);
      assert.equal(got.status, 200);
      assert.equal(got.headers['content-type'], 'application/octet-stream');
      assert.equal(got.bytes.toString(), 'bytes');
    });

    test('complete without md5 checks the size only', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const f = await createSession(t, s.secret, { filename: 'n', mimeType: 'application/octet-stream', sizeBytes: 4 });
      assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('abcd'))).status, 200);
      const done = await t.app.inject({
        method: 'POST',
        url: `/v1/files/${f.id}/complete`,
        headers: { authorization: `Bearer ${s.secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json' },
        payload: '',
      });
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(done.json().status, 'COMPLETED');
    });

    test('cancel: only PENDING; deletes the bytes; then complete, cancel and url are refused', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const f = await createSession(t, s.secret, { filename: 'c.txt', mimeType: 'text/plain', sizeBytes: 3 });
      assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('abc'))).status, 200);
      const key = (await rowOf(t, f.id)).blob_key as string;
      assert.ok(await t.deps.blobs.stat(key));
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/cancel`, { reason: 'x' }), 400, 'unknown_field', 'reason');
      const res = await call(t, s.secret, 'POST', `/v1/files/${f.id}/cancel`, {});
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'CANCELLED');
      assert.equal(res.json().expiresAt, null);
      assert.equal(res.json().completedAt, null);
      assert.equal(await t.deps.blobs.stat(key), null, 'cancelling deletes the bytes');
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/cancel`), 409, 'invalid_file_state');
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5('abc') }), 409, 'invalid_file_state');
      assertError(await call(t, s.secret, 'GET', `/v1/files/${f.id}/url`), 409, 'invalid_file_state');
      assert.equal((await call(t, s.secret, 'GET', `/v1/files/${f.id}`)).json().status, 'CANCELLED');
      // A COMPLETED file cannot be cancelled either.
      const done = await uploadFile(t, s.secret, Buffer.from('xyz'));
      assertError(await call(t, s.secret, 'POST', `/v1/files/${done.id}/cancel`), 409, 'invalid_file_state');
    });

    test('url: only for COMPLETED; the address downloads exactly the bytes', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const bytes = Buffer.from('%PDF-1.7 pretend');
      const f = await createSession(t, s.secret, { filename: 'report "Q1".pdf', mimeType: 'application/pdf', sizeBytes: bytes.length });
      assertError(await call(t, s.secret, 'GET', `/v1/files/${f.id}/url`), 409, 'invalid_file_state');
      await putBytes(t, f.uploadUrl, f.uploadHeaders, bytes);
      assert.equal((await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5(bytes) })).statusCode, 200);
      const before = Date.now();
      const res = await call(t, s.secret, 'GET', `/v1/files/${f.id}/url`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(Object.keys(res.json()).sort(), ['expiresAt', 'url']);
      const ttl = Date.parse(res.json().expiresAt) - before;
      assert.ok(ttl > 899_000 && ttl <= 901_000, String(ttl));
      const got = await download(t, res.json().url);
      assert.equal(got.status, 200);
      assert.ok(got.bytes.equals(bytes));
      assert.match(String(got.headers['content-disposition']), /^attachment; filename="report _Q1_.pdf"; filename\*=UTF-8''report%20%22Q1%22.pdf$/);
    });

    test('a PENDING session past expiresAt reads EXPIRED at once; the sweeper persists it and deletes its bytes', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const f = await createSession(t, s.secret, { filename: 'e.txt', mimeType: 'text/plain', sizeBytes: 2, purpose: 'knowledge_user' });
      assert.equal((await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('ok'))).status, 200);
      const key = (await rowOf(t, f.id)).blob_key as string;
      await expire(t, f.id);
      const got = (await call(t, s.secret, 'GET', `/v1/files/${f.id}`)).json();
      assert.equal(got.status, 'EXPIRED');
      assert.equal(got.expiresAt, null);
      assert.equal((await call(t, s.secret, 'GET', '/v1/files')).json().data[0].status, 'EXPIRED');
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`), 409, 'invalid_file_state');
      assertError(await call(t, s.secret, 'POST', `/v1/files/${f.id}/cancel`), 409, 'invalid_file_state');
      assertError(await call(t, s.secret, 'GET', `/v1/files/${f.id}/url`), 409, 'invalid_file_state');
      assert.equal((await rowOf(t, f.id)).status, 'PENDING');
      // S3 keeps orphaned bytes a minute past the deadline, for presigned PUTs still in flight.
      const r = await sweepAt(t, Date.now() + (backend === 's3' ? 3600_000 + 120_000 : 0));
      assert.ok(r.expired >= 1);
      const row = await rowOf(t, f.id);
      assert.equal(row.status, 'EXPIRED');
      assert.equal(row.expires_at, null);
      assert.equal(await t.deps.blobs.stat(key), null);
      const pending = await t.deps.db.kysely.selectFrom('knowledge_entries').selectAll().where('file_id', '=', f.id).execute();
      assert.equal(pending.length, 0);
      assert.equal((await call(t, s.secret, 'GET', `/v1/files/${f.id}`)).json().status, 'EXPIRED');
    });

    test('list: newest first, paginated, exact totalCount, only this workspace', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const other = await seedWorkspace(t);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await createSession(t, s.secret, { filename: `f${i}`, mimeType: 'text/plain', sizeBytes: 1 })).id);
      await createSession(t, other.secret, { filename: 'theirs', mimeType: 'text/plain', sizeBytes: 1 });
      const created = await Promise.all(ids.map(async (id) => (await call(t, s.secret, 'GET', `/v1/files/${id}`)).json()));
      // Newest first; several created within one millisecond are ordered by id.
      const order = created.sort(newestFirst).map((f) => f.id);
      const page = (await call(t, s.secret, 'GET', '/v1/files?limit=3')).json();
      assert.equal(page.object, 'list');
      assert.equal(page.totalCount, 4);
      assert.deepEqual(
        page.data.map((f: { id: string }) => f.id),
        order.slice(0, 3),
      );
      assert.deepEqual(Object.keys(page.data[0]).sort(), FILE_KEYS);
      const rest = (await call(t, s.secret, 'GET', '/v1/files?limit=3&offset=3')).json();
      assert.deepEqual(
        rest.data.map((f: { id: string }) => f.id),
        [order[3]],
      );
      const past = (await call(t, s.secret, 'GET', '/v1/files?offset=40')).json();
      assert.deepEqual(past, { data: [], object: 'list', totalCount: 4 });
      assertError(await call(t, s.secret, 'GET', '/v1/files?limit=26'), 400, 'invalid_parameter', 'limit');
      // Another workspace's id reads exactly like a random one.
      const theirs = await call(t, s.secret, 'GET', `/v1/files/${ids[0]}`, undefined);
      assert.equal(theirs.statusCode, 200);
      const foreign = (await call(t, other.secret, 'GET', `/v1/files/${ids[0]}`)).json().error;
      const random = (await call(t, other.secret, 'GET', '/v1/files/fil_00000000000000000000000000')).json().error;
      assert.equal(foreign.code, 'resource_not_found');
      assert.equal(foreign.message.replace(ids[0] as string, 'X'), random.message.replace('fil_00000000000000000000000000', 'X'));
      for (const p of ['', '/url']) assert.equal((await call(t, other.secret, 'GET', `/v1/files/${ids[0]}${p}`)).statusCode, 404);
      for (const p of ['/complete', '/cancel']) assert.equal((await call(t, other.secret, 'POST', `/v1/files/${ids[0]}${p}`)).statusCode, 404);
    });

    test('scopes: files:read cannot create, complete or cancel; files:create cannot read', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const reader = await keyFor(t, s.workspaceId, s.userId, ['files:read']);
      const writer = await keyFor(t, s.workspaceId, s.userId, ['files:create']);
      const f = await createSession(t, writer, { filename: 'x', mimeType: 'text/plain', sizeBytes: 1 });
      assertError(await call(t, reader, 'POST', '/v1/files', { filename: 'x', mimeType: 'text/plain', sizeBytes: 1 }), 403, 'insufficient_scope');
      assertError(await call(t, reader, 'POST', `/v1/files/${f.id}/complete`), 403, 'insufficient_scope');
      assertError(await call(t, reader, 'POST', `/v1/files/${f.id}/cancel`), 403, 'insufficient_scope');
      assertError(await call(t, writer, 'GET', `/v1/files/${f.id}`), 403, 'insufficient_scope');
      assertError(await call(t, writer, 'GET', '/v1/files'), 403, 'insufficient_scope');
      assertError(await call(t, writer, 'GET', `/v1/files/${f.id}/url`), 403, 'insufficient_scope');
      assert.equal((await call(t, reader, 'GET', `/v1/files/${f.id}`)).json().status, 'PENDING');
    });

    test('Idempotency-Key on create, complete and cancel replays the first outcome', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const body = { filename: 'i.txt', mimeType: 'text/plain', sizeBytes: 2 };
      const a = await call(t, s.secret, 'POST', '/v1/files', body, { 'idempotency-key': 'create-1' });
      const b = await call(t, s.secret, 'POST', '/v1/files', body, { 'idempotency-key': 'create-1' });
      assert.equal(b.headers['idempotent-replayed'], 'true');
      assert.equal(b.body, a.body);
      assert.equal((await call(t, s.secret, 'GET', '/v1/files')).json().totalCount, 1);
      const f = a.json();
      await putBytes(t, f.uploadUrl, f.uploadHeaders, Buffer.from('hi'));
      const c1 = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5('hi') }, { 'idempotency-key': 'complete-1' });
      const c2 = await call(t, s.secret, 'POST', `/v1/files/${f.id}/complete`, { md5: md5('hi') }, { 'idempotency-key': 'complete-1' });
      assert.equal(c2.headers['idempotent-replayed'], 'true');
      assert.equal(c2.body, c1.body);
      const g = await createSession(t, s.secret, body);
      const x1 = await call(t, s.secret, 'POST', `/v1/files/${g.id}/cancel`, undefined, { 'idempotency-key': 'cancel-1' });
      const x2 = await call(t, s.secret, 'POST', `/v1/files/${g.id}/cancel`, undefined, { 'idempotency-key': 'cancel-1' });
      assert.equal(x1.statusCode, 200);
      assert.equal(x2.headers['idempotent-replayed'], 'true');
      assert.equal(x2.body, x1.body);
    });

    test('a completed knowledge file joins the Knowledge of its user or workspace; a cancelled one never does', async () => {
      const t = ctx();
      const s = await seedWorkspace(t, { role: 'admin' });
      const wsKey = await keyFor(t, s.workspaceId, null);
      const mine = await uploadFile(t, s.secret, Buffer.from('# my notes'), { filename: 'mine.md', mimeType: 'text/markdown', purpose: 'knowledge_user' });
      const shared = await uploadFile(t, wsKey, Buffer.from('a,b\n1,2\n'), { filename: 'shared.csv', mimeType: 'text/csv', purpose: 'knowledge_workspace' });
      const dropped = await createSession(t, s.secret, { filename: 'dropped.md', mimeType: 'text/markdown', sizeBytes: 3, purpose: 'knowledge_user' });
      const waiting = await createSession(t, s.secret, { filename: 'waiting.md', mimeType: 'text/markdown', sizeBytes: 3, purpose: 'knowledge_user' });
      await call(t, s.secret, 'POST', `/v1/files/${dropped.id}/cancel`);
      await uploadFile(t, s.secret, Buffer.from('plain'), { filename: 'plain.txt', mimeType: 'text/plain' });
      const all = await listKnowledge(operatorCtx(t.deps.db.kysely, s.workspaceId));
      assert.deepEqual(
        all.map((k) => [k.fileId, k.owner, k.userId]).sort(),
        [
          [mine.id, 'user', s.userId],
          [shared.id, 'workspace', null],
        ].sort(),
      );
      assert.ok(!all.some((k) => k.fileId === waiting.id));
      const user = await listKnowledge(operatorCtx(t.deps.db.kysely, s.workspaceId), { userId: s.userId });
      assert.deepEqual(
        user.map((k) => k.filename),
        ['mine.md'],
      );
    });
  };
}

for (const backend of ['disk', 's3'] as const) {
  eachDialect(`files (${backend})`, suite(backend), backendDeps(backend));
}
