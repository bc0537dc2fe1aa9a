// Two independent server processes on one PostgreSQL, one Redis and one S3 store behave as one
// service (issue 6, part 5): reads see the other's writes, idempotency holds across them, an upload
// started on one completes on the other and downloads from the first, and the workspace's rate
// limit holds across both.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/auth/service.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { startServerProcess, type ServerProcess } from '../helpers/process.ts';
import { ACCESS_KEY, startTestS3, type TestS3 } from '../helpers/s3-server.ts';
import { IN_CI, services, TEST_REDIS_URL } from '../helpers/services.ts';
import { systemCtx, operatorCtx } from '../../src/lib/context.ts';

const READ_LIMIT = 20;
const available = services();

if (IN_CI || (available.postgres && available.redis)) {
  describe('scale-out: two processes on PostgreSQL + Redis + S3', () => {
    let tdb: TestDb;
    let s3: TestS3;
    let dir: string;
    let a: ServerProcess;
    let b: ServerProcess;
    let secret: string;
    const h = () => ({ authorization: `Bearer ${secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json' });

    before(async () => {
      tdb = await createTestDb('postgres');
      dir = mkdtempSync(join(tmpdir(), 'rolodex-scale-'));
      s3 = await startTestS3(join(dir, 's3'), 'rolodex');
      const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Scale' });
      secret = (await createKey(operatorCtx(tdb.db.kysely, ws.id), { userId: null, scopes: null, expiresInMs: null })).secret;
      const env = (name: string) => ({
        DATA_DIR: join(dir, name), // nothing shared on local disk
        DATABASE_URL: tdb.databaseUrl as string,
        REDIS_URL: TEST_REDIS_URL,
        // A loaded machine may read Redis's answers late, but must not take Redis for gone: each
        // process's local buckets would then let through more than the shared limit.
        REDIS_COMMAND_TIMEOUT_MS: '10000',
        S3_BUCKET: 'rolodex',
        S3_ENDPOINT: s3.endpoint,
        S3_ACCESS_KEY_ID: ACCESS_KEY,
        S3_SECRET_ACCESS_KEY: ACCESS_KEY,
        SIGNING_SECRET: 'scale-out-test-signing-secret-0123456789',
        RATE_LIMIT_READ: String(READ_LIMIT),
        RATE_LIMIT_WRITE: '0',
        RATE_LIMIT_SEARCH: '0',
      });
      [a, b] = await Promise.all([startServerProcess(env('a')), startServerProcess(env('b'))]);
    });
    after(async () => {
      await Promise.all([a?.stop('SIGKILL'), b?.stop('SIGKILL')]);
      await s3?.close();
      await tdb?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('a list created through one is read through the other', async () => {
      const created = await fetch(`${a.baseUrl}/v1/lists`, {
        method: 'POST',
        headers: h(),
        body: JSON.stringify({ fields: { $name: 'Shared', $objectType: 'account' } }),
      });
      assert.equal(created.status, 200);
      const list = (await created.json()) as { id: string };
      const read = await fetch(`${b.baseUrl}/v1/lists/${list.id}`, { headers: h() });
      assert.equal(read.status, 200);
      assert.equal(((await read.json()) as { fields: { $name: { value: string } } }).fields.$name.value, 'Shared');
    });

    test('50 concurrent identical idempotent creates spread over both give one list', async () => {
      const body = JSON.stringify({ fields: { $name: 'Once only', $objectType: 'contact' } });
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          fetch(`${(i % 2 ? a : b).baseUrl}/v1/lists`, { method: 'POST', headers: { ...h(), 'idempotency-key': 'scale-once' }, body }).then(async (r) => ({
            status: r.status,
            body: await r.text(),
          })),
        ),
      );
      assert.ok(
        results.every((r) => r.status === 200 || r.status === 409),
        results.map((r) => r.status).join(','),
      );
      const ids = new Set(results.filter((r) => r.status === 200).map((r) => (JSON.parse(r.body) as { id: string }).id));
      assert.equal(ids.size, 1);
      const rows = await tdb.db.kysely.selectFrom('lists').select('id').where('name', '=', 'Once only').execute();
      assert.equal(rows.length, 1);
    });

    test('50 concurrent identical idempotent contact creates spread over both give one contact, listed once', async () => {
      const body = JSON.stringify({ fields: { $name: { firstName: 'Once', lastName: 'Only' }, $email: ['once@scale.test'] } });
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          fetch(`${(i % 2 ? a : b).baseUrl}/v1/contacts`, { method: 'POST', headers: { ...h(), 'idempotency-key': 'scale-contact' }, body }).then(
            async (r) => ({ status: r.status, body: await r.text() }),
          ),
        ),
      );
      assert.ok(
        results.every((r) => r.status === 200 || r.status === 409),
        results.map((r) => r.status).join(','),
      );
      const ids = new Set(results.filter((r) => r.status === 200).map((r) => (JSON.parse(r.body) as { id: string }).id));
      assert.equal(ids.size, 1);
      const rows = await tdb.db.kysely.selectFrom('records').select('id').where('kind', '=', 'contact').execute();
      assert.equal(rows.length, 1);
      const listed = (await (await fetch(`${b.baseUrl}/v1/contacts`, { headers: h() })).json()) as { totalCount: number; data: { id: string }[] };
      assert.equal(listed.totalCount, 1);
      assert.deepEqual(
        listed.data.map((d) => d.id),
        [...ids],
      );
    });

    test('an upload created on one, sent and completed through the other, downloads from the first', async () => {
      const bytes = Buffer.from('scale-out bytes '.repeat(1000));
      const md5 = createHash('md5').update(bytes).digest('hex');
      const created = await fetch(`${a.baseUrl}/v1/files`, {
        method: 'POST',
        headers: h(),
        body: JSON.stringify({ filename: 'scale.txt', mimeType: 'text/plain', sizeBytes: bytes.length }),
      });
      assert.equal(created.status, 200);
      const file = (await created.json()) as { id: string; uploadUrl: string; uploadHeaders: Record<string, string> };
      assert.ok(file.uploadUrl.startsWith(s3.endpoint), `S3 presigned upload address, got ${file.uploadUrl}`);
      const put = await fetch(file.uploadUrl, { method: 'PUT', headers: file.uploadHeaders, body: bytes });
      assert.equal(put.status, 200, await put.text());
      const done = await fetch(`${b.baseUrl}/v1/files/${file.id}/complete`, { method: 'POST', headers: h(), body: JSON.stringify({ md5 }) });
      assert.equal(done.status, 200, await done.clone().text());
      assert.equal(((await done.json()) as { status: string }).status, 'COMPLETED');
      const url = await fetch(`${a.baseUrl}/v1/files/${file.id}/url`, { headers: h() });
      assert.equal(url.status, 200);
      const got = await fetch(((await url.json()) as { url: string }).url);
      assert.equal(got.status, 200);
      assert.deepEqual(Buffer.from(await got.arrayBuffer()), bytes);
    });

    test('the rate limit holds across both processes (Redis)', async () => {
      // Let the Read bucket fill again after the tests above.
      await new Promise((r) => setTimeout(r, 1100));
      const started = performance.now();
      const statuses = await Promise.all(
        Array.from({ length: 100 }, (_, i) => fetch(`${(i % 2 ? a : b).baseUrl}/v1/auth/validate`, { headers: h() }).then((r) => r.status)),
      );
      const seconds = (performance.now() - started) / 1000;
      const accepted = statuses.filter((s) => s === 200).length;
      // A full bucket (the limit) plus what refilled while the burst ran.
      const expected = READ_LIMIT + READ_LIMIT * seconds;
      console.log(
        `# scale-out rate limit: ${accepted} of 100 accepted in ${seconds.toFixed(2)} s across 2 processes; limit ${READ_LIMIT}/s, expected ≈ ${expected.toFixed(1)}`,
      );
      assert.ok(statuses.every((s) => s === 200 || s === 429));
      assert.ok(accepted >= READ_LIMIT * 0.9, `only ${accepted} accepted`);
      assert.ok(accepted <= expected * 1.1, `${accepted} accepted: the limit did not hold across processes`);
    });
  });
} else {
  process.stderr.write('scale-out test not run: PostgreSQL and Redis are both needed\n');
}
