// An import `file` line that names by its id a file the API created and did not complete
// (docs/import.md §`channel`, `message`, `file`): an upload in progress is its client's to complete
// or cancel, and a cancelled or expired one is over, so the line is refused, naming it, and the
// import writes nothing; the client's upload goes on as if there had been no import.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { ImportFailed, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { createSession, md5, putBytes } from '../helpers/files.ts';

const dir = mkdtempSync(join(tmpdir(), 'rolodex-import-unfinished-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const run = (t: TestApp, ws: string, objects: object[]) =>
  runImport(operatorCtx(t.deps.db.kysely, ws), { kinds: importKinds({ blobs: t.deps.blobs }), text: objects.map((o) => JSON.stringify(o)).join('\n') });

eachDialect('file import over an unfinished upload', (ctx) => {
  test('a line naming a PENDING, CANCELLED or EXPIRED file by its id is refused and writes nothing', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const path = join(dir, 'theirs.txt');
    writeFileSync(path, 'the import bytes');
    const line = (externalId: string) => ({ object: 'file', externalId, source: 'api', filename: 'theirs.txt', mimeType: 'text/plain', path });
    const file = async (id: string) => (await call(t, s.secret, 'GET', `/v1/files/${id}`)).json();

    const mine = Buffer.from('mine');
    const pending = await createSession(t, s.secret, { filename: 'mine.txt', mimeType: 'text/plain', sizeBytes: mine.length });
    assert.equal((await putBytes(t, pending.uploadUrl, pending.uploadHeaders, mine)).status, 200);
    const cancelled = await createSession(t, s.secret, { filename: 'c.txt', mimeType: 'text/plain', sizeBytes: 1 });
    assert.equal((await call(t, s.secret, 'POST', `/v1/files/${cancelled.id}/cancel`)).statusCode, 200);
    const expired = await createSession(t, s.secret, { filename: 'e.txt', mimeType: 'text/plain', sizeBytes: 1 });
    await t.deps.db.kysely.updateTable('files').set({ expires_at: '2000-01-01T00:00:00.000Z' }).where('id', '=', expired.id).execute();

    const cases: [string, RegExp][] = [
      [pending.id, /upload through the API is in progress \(PENDING\): its client completes or cancels it/],
      [cancelled.id, /upload through the API was cancelled \(CANCELLED\)/],
      [expired.id, /upload through the API expired \(EXPIRED\)/],
    ];
    for (const [id, reason] of cases) {
      // A line before it, of a new file, is not written either.
      await assert.rejects(run(t, s.workspaceId, [line('new-file'), line(id)]), (err: unknown) => {
        assert.ok(err instanceof ImportFailed, String(err));
        assert.deepEqual([err.errors[0]?.line, err.errors[0]?.field], [2, 'externalId'], err.message);
        assert.match(err.message, new RegExp(`line 2: externalId: file "${id}": `));
        assert.match(err.message, reason);
        return true;
      });
    }
    assert.deepEqual(
      (await call(t, s.secret, 'GET', '/v1/files'))
        .json()
        .data.map((f: { id: string }) => f.id)
        .sort(),
      [pending.id, cancelled.id, expired.id].sort(),
      'no file was written',
    );
    assert.deepEqual(
      readdirSync(join(t.config.dataDir, 'blobs', s.workspaceId)).filter((f) => f.startsWith('import-')),
      [],
      'the copies of the bytes are gone',
    );
    assert.deepEqual([(await file(cancelled.id)).status, (await file(expired.id)).status], ['CANCELLED', 'EXPIRED']);

    // The client's upload goes on: its bytes, its name.
    assert.equal((await file(pending.id)).status, 'PENDING');
    const done = await call(t, s.secret, 'POST', `/v1/files/${pending.id}/complete`, { md5: md5(mine) });
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual([done.json().status, done.json().filename, done.json().sizeBytes], ['COMPLETED', 'mine.txt', mine.length]);

    // Completed, the file is the import's to update like any other (docs/import.md §Rules).
    await run(t, s.workspaceId, [line(pending.id)]);
    assert.deepEqual([(await file(pending.id)).filename, (await file(pending.id)).sizeBytes], ['theirs.txt', 'the import bytes'.length]);
  });

  test('another line may attach only a COMPLETED file: one the API has not completed names nothing, and nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const bytes = Buffer.from('attached');
    const pending = await createSession(t, s.secret, { filename: 'a.txt', mimeType: 'text/plain', sizeBytes: bytes.length });
    assert.equal((await putBytes(t, pending.uploadUrl, pending.uploadHeaders, bytes)).status, 200);
    const contact = {
      object: 'contact',
      externalId: 'c-1',
      fields: { $name: { value: { firstName: 'Ann' }, valueType: 'FULL_NAME' } },
      relationships: { $files: { objectType: 'file', values: [pending.id] } },
    };
    await assert.rejects(run(t, s.workspaceId, [contact]), (err: unknown) => {
      assert.ok(err instanceof ImportFailed, String(err));
      assert.match(err.message, new RegExp(`line 1: relationships.\\$files.values\\[0\\]: no COMPLETED file with externalId "${pending.id}"`));
      return true;
    });
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0, 'nothing was written');
    // Completed by its client, it may be attached.
    assert.equal((await call(t, s.secret, 'POST', `/v1/files/${pending.id}/complete`, { md5: md5(bytes) })).statusCode, 200);
    await run(t, s.workspaceId, [contact]);
    const listed = (await call(t, s.secret, 'GET', '/v1/contacts')).json().data;
    assert.deepEqual(listed[0].relationships.$files.values, [pending.id]);
  });
});
