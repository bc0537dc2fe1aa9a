// Files loaded by `rolodex import` (sources api, app, chat_attachment; bytes read from a path),
// which of them the API lists, re-import, all-or-nothing failure, the Knowledge CLI and the demo.
import assert from 'node:assert/strict';
import fs, { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { fileKind } from '../../src/files/import.ts';
import { filesEnv } from '../../src/files/service.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { IMPORT_CHUNK, ImportFailed, runImport } from '../../src/import/run.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { download, md5, uploadFile } from '../helpers/files.ts';

function captureIo(t: TestApp): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
  return { out: (x) => stdout.push(x), err: (x) => stderr.push(x), env, isTty: false, stdout, stderr };
}

const sampleDirs: string[] = [];
after(() => {
  for (const dir of sampleDirs) rmSync(dir, { recursive: true, force: true });
});

function sampleFiles(): { dir: string; write(name: string, content: string | Buffer): string } {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-import-files-'));
  sampleDirs.push(dir);
  return { dir, write: (name, content) => (writeFileSync(join(dir, name), content), join(dir, name)) };
}

const importText = (objects: object[]) => objects.map((o) => JSON.stringify(o)).join('\n');
const run = (t: TestApp, ws: string, objects: object[]) =>
  runImport(operatorCtx(t.deps.db.kysely, ws), { kinds: importKinds({ blobs: t.deps.blobs }), text: importText(objects) });

function blobCount(t: TestApp, ws: string): number {
  try {
    return readdirSync(join(t.config.dataDir, 'blobs', ws)).length;
  } catch {
    return 0;
  }
}

eachDialect('file import', (ctx) => {
  test('imported files of every source are fetchable by id and url; only api ones are listed and counted', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = sampleFiles();
    const result = await run(t, s.workspaceId, [
      { object: 'file', externalId: 'api-1', source: 'api', filename: 'report.pdf', mimeType: 'application/pdf', path: f.write('a', '%PDF api') },
      { object: 'file', externalId: 'app-1', source: 'app', filename: 'logo.png', mimeType: 'image/png', path: f.write('b', 'png bytes') },
      { object: 'file', externalId: 'chat-1', source: 'chat_attachment', filename: 'shot.png', mimeType: 'image/png', path: f.write('c', 'chat bytes') },
    ]);
    assert.deepEqual(result.counts, { file: 3 });
    await uploadFile(t, s.secret, Buffer.from('via api'));
    const list = (await call(t, s.secret, 'GET', '/v1/files')).json();
    assert.equal(list.totalCount, 2);
    assert.equal(list.data.length, 2);
    assert.ok(list.data.some((x: { id: string }) => x.id === result.ids.file?.['api-1']));
    for (const [ext, content] of [
      ['api-1', '%PDF api'],
      ['app-1', 'png bytes'],
      ['chat-1', 'chat bytes'],
    ] as const) {
      const id = result.ids.file?.[ext] as string;
      const got = (await call(t, s.secret, 'GET', `/v1/files/${id}`)).json();
      assert.equal(got.status, 'COMPLETED');
      assert.equal(got.sizeBytes, content.length);
      assert.equal(got.expiresAt, null);
      assert.ok(got.completedAt);
      const row = await t.deps.db.kysely.selectFrom('files').select('md5').where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.md5, md5(content));
      const url = (await call(t, s.secret, 'GET', `/v1/files/${id}/url`)).json().url;
      assert.equal((await download(t, url)).bytes.toString(), content);
      // Completed, so cancel is refused like any completed file.
      assert.equal((await call(t, s.secret, 'POST', `/v1/files/${id}/cancel`)).statusCode, 409);
    }
  });

  test('re-importing updates the same files, moves them in and out of the listing, and frees the old bytes', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = sampleFiles();
    const first = await run(t, s.workspaceId, [
      { object: 'file', externalId: 'x', source: 'app', filename: 'old.txt', mimeType: 'text/plain', path: f.write('x1', 'old') },
    ]);
    assert.equal((await call(t, s.secret, 'GET', '/v1/files')).json().totalCount, 0);
    const second = await run(t, s.workspaceId, [
      { object: 'file', externalId: 'x', source: 'api', filename: 'new.txt', mimeType: 'text/plain', path: f.write('x2', 'newer') },
    ]);
    const id = first.ids.file?.x as string;
    assert.equal(second.ids.file?.x, id);
    const list = (await call(t, s.secret, 'GET', '/v1/files')).json();
    assert.equal(list.totalCount, 1);
    assert.equal(list.data[0].filename, 'new.txt');
    assert.equal(list.data[0].sizeBytes, 5);
    assert.equal(blobCount(t, s.workspaceId), 2);
    await sweepOnce({ db: t.deps.db.kysely, now: Date.now(), files: filesEnv(t.config, t.deps.blobs) });
    assert.equal(blobCount(t, s.workspaceId), 1);
    const url = (await call(t, s.secret, 'GET', `/v1/files/${id}/url`)).json().url;
    assert.equal((await download(t, url)).bytes.toString(), 'newer');
    await run(t, s.workspaceId, [
      { object: 'file', externalId: 'x', source: 'chat_attachment', filename: 'n.txt', mimeType: 'text/plain', path: f.write('x3', 'z') },
    ]);
    assert.equal((await call(t, s.secret, 'GET', '/v1/files')).json().totalCount, 0);
  });

  test('a failing import writes nothing and leaves no bytes behind; errors name the line and field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = sampleFiles();
    const ok = { object: 'file', externalId: 'ok', source: 'api', filename: 'a.txt', mimeType: 'text/plain', path: f.write('ok', 'fine') };
    const checks: Array<[object, string]> = [
      [{ ...ok, externalId: 'b', source: 'email' }, 'source'],
      [{ ...ok, externalId: 'b', filename: 'a\u0000b' }, 'filename'],
      [{ ...ok, externalId: 'b', mimeType: 'nope' }, 'mimeType'],
      [{ ...ok, externalId: 'b', path: undefined }, 'path'],
      [{ ...ok, externalId: 'b', sizeBytes: 3 }, 'sizeBytes'],
    ];
    for (const [bad, field] of checks) {
      await assert.rejects(
        run(t, s.workspaceId, [ok, bad]),
        (err: unknown) => err instanceof ImportFailed && err.errors[0]?.line === 2 && err.errors[0]?.field === field,
      );
    }
    await assert.rejects(run(t, s.workspaceId, [ok, { ...ok, externalId: 'missing', path: join(f.dir, 'nope') }]), (err: unknown) => {
      return err instanceof ImportFailed && err.errors[0]?.line === 2 && err.errors[0]?.field === 'path' && /ENOENT/.test(err.message);
    });
    assert.equal(blobCount(t, s.workspaceId), 0);
    // A failure inside the transaction (a user whose email clashes) undoes the copied bytes too.
    const user = { object: 'user', externalId: 'u1', email: 'same@example.test' };
    await assert.rejects(run(t, s.workspaceId, [ok, user, { ...user, externalId: 'u2' }]), ImportFailed);
    assert.equal(blobCount(t, s.workspaceId), 0);
    assert.equal((await t.deps.db.kysely.selectFrom('files').select('id').where('workspace_id', '=', s.workspaceId).execute()).length, 0);
  });

  test('a batched import that fails removes the bytes of the chunk it did not commit, and keeps those of the chunks it did', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = sampleFiles();
    const line = (externalId: string, extra: object = {}) => ({
      object: 'file',
      externalId,
      source: 'app',
      filename: `${externalId}.txt`,
      mimeType: 'text/plain',
      path: f.write(externalId, `bytes of ${externalId}`),
      ...extra,
    });
    const first = await run(t, s.workspaceId, [line('t', { purpose: 'meeting_transcript' })]);
    assert.equal(blobCount(t, s.workspaceId), 1);
    // Chunks of 2: a and b commit; c and the line that would change t's purpose fail together.
    const saved = IMPORT_CHUNK.batched;
    IMPORT_CHUNK.batched = 2;
    try {
      const lines = [line('a'), line('b'), line('c'), line('t', { purpose: 'email_attachment' })];
      await assert.rejects(
        runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds({ blobs: t.deps.blobs }), text: importText(lines), commit: 'batched' }),
        (err: unknown) => err instanceof ImportFailed && err.committed === true && err.errors[0]?.line === 4 && err.errors[0]?.field === 'purpose',
      );
    } finally {
      IMPORT_CHUNK.batched = saved;
    }
    // t's bytes, a's and b's: nothing of c nor of t's second copy, which no row names.
    assert.equal(blobCount(t, s.workspaceId), 3);
    const rows = await t.deps.db.kysely.selectFrom('files').select(['id', 'external_id']).where('workspace_id', '=', s.workspaceId).execute();
    assert.deepEqual(rows.map((r) => r.external_id).sort(), ['a', 'b', 't']);
    for (const r of rows) {
      const url = (await call(t, s.secret, 'GET', `/v1/files/${r.id}/url`)).json().url;
      assert.equal((await download(t, url)).bytes.toString(), `bytes of ${r.external_id}`);
    }
    assert.equal(first.ids.file?.t, rows.find((r) => r.external_id === 't')?.id);
  });

  test("undoing an import's copies keeps those a row names (a COMMIT that failed on the way may have written it)", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = sampleFiles();
    const kind = fileKind(t.deps.blobs);
    const raw = { source: 'app', filename: 'k.txt', mimeType: 'text/plain', path: f.write('k', 'kept') };
    const items = [
      { line: 1, externalId: 'k', value: kind.check(raw) },
      { line: 2, externalId: 'l', value: kind.check({ ...raw, path: f.write('l', 'lost') }) },
    ];
    const prepared = await kind.prepare!(operatorCtx(t.deps.db.kysely, s.workspaceId), items);
    const blob = items[0]!.value.blob!;
    const at = new Date().toISOString();
    await t.deps.db.kysely
      .insertInto('files')
      .values({
        id: 'fil_01m8yzzzzzzzzzzzzzzzzzzzzz',
        workspace_id: s.workspaceId,
        external_id: 'k',
        source: 'app',
        status: 'COMPLETED',
        filename: 'k.txt',
        mime_type: 'text/plain',
        size_bytes: blob.size,
        md5: blob.md5,
        blob_key: blob.key,
        created_at: at,
        completed_at: at,
        expires_at: null,
        upload_deadline: at,
        purpose: null,
      })
      .execute();
    await prepared.undo();
    assert.equal(blobCount(t, s.workspaceId), 1);
    assert.deepEqual(await t.deps.blobs.stat(blob.key), { size: 4, md5: md5('kept') });
  });

  test('rolodex knowledge list shows completed knowledge files; rolodex demo gains files', async () => {
    const t = ctx();
    const s = await seedWorkspace(t, { role: 'admin' });
    await uploadFile(t, s.secret, Buffer.from('# mine'), { filename: 'mine.md', mimeType: 'text/markdown', purpose: 'knowledge_user' });
    const io = captureIo(t);
    assert.equal(await main(['knowledge', 'list', '--workspace', s.workspaceId, '--json'], io), 0, io.stderr.join(''));
    const items = JSON.parse(io.stdout.join(''));
    assert.equal(items.length, 1);
    assert.equal(items[0].filename, 'mine.md');
    assert.equal(items[0].owner, 'user');
    assert.equal(items[0].userId, s.userId);
    const none = captureIo(t);
    assert.equal(await main(['knowledge', 'list', '--workspace', s.workspaceId, '--workspace-only'], none), 0);
    assert.match(none.stdout.join(''), /no knowledge files/);
    assert.equal(await main(['knowledge', 'list', '--workspace', 'ws_nope'], captureIo(t)), 1);
    // --user names a user by id, externalId or email, as every command does; an unknown one is refused.
    const email = (await t.deps.db.kysely.selectFrom('users').select('email').where('id', '=', s.userId).executeTakeFirstOrThrow()).email;
    for (const ref of [s.userId, email]) {
      const mine = captureIo(t);
      assert.equal(await main(['knowledge', 'list', '--workspace', s.workspaceId, '--user', ref, '--json'], mine), 0, mine.stderr.join(''));
      assert.deepEqual(
        JSON.parse(mine.stdout.join('')).map((k: { filename: string }) => k.filename),
        ['mine.md'],
        ref,
      );
    }
    const nobody = captureIo(t);
    assert.equal(await main(['knowledge', 'list', '--workspace', s.workspaceId, '--user', 'nobody@example.test'], nobody), 1);
    assert.match(nobody.stderr.join(''), /no user "nobody@example\.test"/);

    const demo = captureIo(t);
    assert.equal(await main(['demo', '--json'], demo), 0, demo.stderr.join(''));
    const out = JSON.parse(demo.stdout.join(''));
    assert.equal(out.counts.file, 3);
    for (const kind of ['user', 'channel', 'account', 'contact', 'opportunity', 'message']) assert.ok(out.counts[kind] > 0, `the demo has no ${kind}`);
    const key = out.keys.admin.secret as string;
    const messages = (await call(t, key, 'GET', '/v1/messages')).json();
    assert.ok(
      messages.data.some((m: { relationships: { $files: { values: string[] } } }) =>
        m.relationships.$files.values.includes(out.ids.file['file-chat-screenshot']),
      ),
      'a demo message links its attachment',
    );
    const list = (await call(t, key, 'GET', '/v1/files')).json();
    assert.equal(list.totalCount, 1);
    const meetings = (await call(t, out.keys.workspace.secret, 'GET', '/v1/meetings')).json();
    assert.deepEqual(
      meetings.data.map((m: { accessLevel: string }) => m.accessLevel),
      ['FULL', 'METADATA'],
      'the demo meetings: one open, one private to its attendees',
    );
    const logo = (await call(t, key, 'GET', `/v1/files/${out.ids.file['file-logo']}`)).json();
    assert.equal(logo.status, 'COMPLETED');
    const url = (await call(t, key, 'GET', `/v1/files/${out.ids.file['file-chat-screenshot']}/url`)).json().url;
    assert.equal((await download(t, url)).status, 200);
    const kn = captureIo(t);
    assert.equal(await main(['knowledge', 'list', '--workspace', out.workspace.id, '--json'], kn), 0);
    assert.equal(JSON.parse(kn.stdout.join(''))[0].fileId, out.ids.file['file-handbook']);
  });

  test('a blob directory the disk refuses stops `rolodex import` with one line saying so, no stack', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const f = sampleFiles();
    const file = f.write(
      'lines.ndjson',
      importText([{ object: 'file', externalId: 'd', source: 'api', filename: 'a.txt', mimeType: 'text/plain', path: f.write('d', 'bytes') }]),
    );
    // Writes under the blob directory go to /dev/full: ENOSPC, a real fault of the file system.
    const blobs = join(t.config.dataDir, 'blobs');
    const original = fs.createWriteStream;
    fs.createWriteStream = ((p: fs.PathLike, opts?: Record<string, unknown>) =>
      String(p).startsWith(blobs) ? original('/dev/full', { ...opts, flags: 'w' }) : original(p, opts)) as typeof fs.createWriteStream;
    syncBuiltinESMExports();
    const io = captureIo(t);
    try {
      assert.equal(await main(['import', '--workspace', s.workspaceId, '--commit', 'atomic', file], io), 1);
    } finally {
      fs.createWriteStream = original;
      syncBuiltinESMExports();
    }
    const said = io.stderr.join('');
    assert.match(said, /^rolodex import: .*the blob directory cannot be used/);
    assert.doesNotMatch(said, /unexpected error|\n\s+at /);
    assert.equal(blobCount(t, s.workspaceId), 0);
  });
});
