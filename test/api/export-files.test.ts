// `rolodex export --files DIR` (docs/import.md §Export, docs/files.md §Listing and import): files
// uploaded through the API and imported as app and chat attachments, linked from a contact, a
// message and e-mails, are exported with their bytes and imported into an empty workspace, which
// then reads the same files, bytes and links through the API. Without --files, the export writes
// no file and no link to one, as before; a failed export removes the DIR it made.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { truncate } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { call, eachDialect, keyFor, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { createSession, download, uploadFile } from '../helpers/files.ts';

type Line = { object: string; externalId: string; path?: string; relationships?: Record<string, unknown> };
type Entity = { id: string; externalId: string | null; relationships: Record<string, { values: string[] }> };
type Ids = Record<string, Record<string, string>>;

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

async function ok<T>(t: TestApp, secret: string, url: string, method: 'GET' | 'POST' = 'GET', body?: unknown): Promise<T> {
  const r = await call(t, secret, method, url, body);
  assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
  return r.json<T>();
}

/** A workspace's files as the API shows them, with source, size and MD5 as stored, and their bytes. */
async function fileOf(t: TestApp, s: Seeded, id: string) {
  const { id: _id, createdAt: _c, completedAt: _d, ...shown } = await ok<Record<string, unknown>>(t, s.secret, `/v1/files/${id}`);
  const row = await t.deps.db.kysely.selectFrom('files').select(['source', 'size_bytes', 'md5']).where('id', '=', id).executeTakeFirstOrThrow();
  const got = await download(t, (await ok<{ url: string }>(t, s.secret, `/v1/files/${id}/url`)).url);
  assert.equal(got.status, 200);
  return { shown, source: row.source, size: Number(row.size_bytes), md5: row.md5, bytes: got.bytes };
}

/** The names of the files an entity links (`rel`), in order, read through the API. */
async function linked(t: TestApp, secret: string, url: string, rel: string, name: (id: string) => string): Promise<string[]> {
  return ((await ok<Entity>(t, secret, url)).relationships[rel]?.values ?? []).map(name);
}

eachDialect('rolodex export --files', (ctx) => {
  test('export with --files, then import into an empty workspace, reproduces every file, its bytes and its links', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const bytes = new Map<string, Buffer>();
    const upload = async (content: Buffer, filename: string, mimeType: string) => {
      const f = await uploadFile(t, a.secret, content, { filename, mimeType });
      bytes.set(f.id, content);
      return f.id;
    };
    const report = await upload(Buffer.from('quarterly report\n'), 'report "Q1".txt', 'text/plain');
    const photo = await upload(randomBytes(70_000), 'photo.png', 'image/png');
    const pending = (await createSession(t, a.secret, { filename: 'later.txt', mimeType: 'text/plain', sizeBytes: 5 })).id;

    const src = join(t.tdb.dataDir, `source-${a.workspaceId}`);
    mkdirSync(src);
    bytes.set('f-logo', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'));
    bytes.set('f-shot', randomBytes(5000));
    writeFileSync(join(src, 'logo.svg'), bytes.get('f-logo') as Buffer);
    writeFileSync(join(src, 'shot.jpg'), bytes.get('f-shot') as Buffer);
    const files = (values: string[]) => ({ objectType: 'file', values });
    const at = (value: unknown, valueType: string) => ({ value, valueType });
    const address = `ann-${a.workspaceId}@acme.test`;
    const source = [
      { object: 'user', externalId: 'u-ann', email: address, firstName: 'Ann', role: 'member' },
      { object: 'channel', externalId: 'ch-pub', provider: 'slack', name: 'general', visibility: 'public', members: ['u-ann'] },
      { object: 'file', externalId: 'f-logo', source: 'app', filename: 'logo.svg', mimeType: 'image/svg+xml', path: join(src, 'logo.svg') },
      { object: 'file', externalId: 'f-shot', source: 'chat_attachment', filename: 'shot.jpg', mimeType: 'image/jpeg', path: join(src, 'shot.jpg') },
      {
        object: 'contact',
        externalId: 'c-ann',
        fields: { $name: at({ firstName: 'Ann' }, 'FULL_NAME') },
        relationships: { $files: files(['f-shot', 'f-logo']) },
      },
      {
        object: 'message',
        externalId: 'm-1',
        channel: 'ch-pub',
        fields: { $text: at('See the screenshot', 'TEXT'), $sentAt: at('2026-03-01T09:00:00.000Z', 'DATETIME') },
        relationships: { $files: files(['f-shot']) },
      },
      { object: 'mailbox', externalId: 'mb-ann', user: 'u-ann', address },
      {
        object: 'email',
        externalId: 'e-1',
        mailbox: 'mb-ann',
        fields: { $sentAt: at('2026-03-02T09:00:00.000Z', 'DATETIME'), $from: at('buyer@globex.test', 'EMAIL') },
        relationships: { $attachment: files(['f-logo']) },
      },
    ];
    const sourceFile = join(src, 'source.ndjson');
    writeFileSync(sourceFile, source.map((o) => JSON.stringify(o)).join('\n'));
    const loaded = await rolodex(t, ['import', '--workspace', a.workspaceId, sourceFile, '--json']);
    assert.equal(loaded.code, 0, loaded.err);
    const aIds = JSON.parse(loaded.out).ids as Ids;
    // An e-mail sent through the API attaches the uploaded files, which have no externalId.
    const sender = `sales-${a.workspaceId}@acme.test`;
    assert.equal((await rolodex(t, ['mailbox', 'add', '--workspace', a.workspaceId, '--user', a.userId, '--address', sender])).code, 0);
    const send = { from: sender, to: ['erin@example.test'], subject: 'Report', messageBody: { contentType: 'TEXT', content: 'attached' } };
    await ok(t, a.secret, '/v1/emails/send', 'POST', { ...send, attachments: [report, photo] });

    const dir = join(t.tdb.dataDir, `export-${a.workspaceId}`, 'files');
    const file = join(t.tdb.dataDir, `export-${a.workspaceId}.ndjson`);
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, '--files', dir, file]);
    assert.equal(ex.code, 0, ex.err);
    const exported = lines(file);
    const objects = exported.map((l) => l.object);
    assert.ok(objects.lastIndexOf('user') < objects.indexOf('file') && objects.lastIndexOf('file') < objects.indexOf('channel'), 'files after users');
    const fileLines = exported.filter((l) => l.object === 'file');
    // Every COMPLETED file, under its externalId, else its id; the pending upload is not written.
    assert.deepEqual(fileLines.map((l) => l.externalId).toSorted(), [report, photo, 'f-logo', 'f-shot'].toSorted());
    assert.ok(!readFileSync(file, 'utf8').includes(pending));
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const aFileIds = fileLines.map((l) => aIds.file?.[l.externalId] ?? l.externalId);
    assert.deepEqual(readdirSync(dir).toSorted(), aFileIds.toSorted(), 'one copy per file, named by its id');
    for (const l of fileLines) assert.ok(isAbsolute(l.path as string) && (l.path as string).startsWith(dir), l.path);

    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file, '--json']);
    assert.equal(im.code, 0, im.err);
    const { ids, counts } = JSON.parse(im.out) as { ids: Ids; counts: Record<string, number> };
    assert.equal(counts.file, 4);

    // The same files: what the API shows, source, size, MD5 and bytes.
    const aName = new Map<string, string>([
      [report, report],
      [photo, photo],
      ...Object.entries(aIds.file ?? {}).map(([ext, id]) => [id, ext] as [string, string]),
    ]);
    const bName = new Map(Object.entries(ids.file ?? {}).map(([ext, id]) => [id, ext]));
    for (const [id, name] of aName) {
      const copy = ids.file?.[name] as string;
      const [orig, got] = [await fileOf(t, a, id), await fileOf(t, b, copy)];
      assert.deepEqual(got, orig, name);
      assert.ok(got.bytes.equals(bytes.get(name) as Buffer), name);
    }
    const listed = async (s: Seeded) => (await ok<{ data: { id: string }[]; totalCount: number }>(t, s.secret, '/v1/files')).data.map((f) => f.id);
    assert.deepEqual((await listed(a)).toSorted(), [report, photo, pending].toSorted());
    assert.deepEqual((await listed(b)).map((id) => bName.get(id)).toSorted(), [report, photo].toSorted(), 'the API files are listed');

    // The links point at the copies, in the same order.
    const nameA = (id: string) => aName.get(id) ?? `?${id}`;
    const nameB = (id: string) => bName.get(id) ?? `?${id}`;
    const contact = async (s: Seeded, map: Ids | undefined, name: (id: string) => string) =>
      linked(t, s.secret, `/v1/contacts/${map?.contact?.['c-ann']}`, '$files', name);
    assert.deepEqual(await contact(b, ids, nameB), ['f-shot', 'f-logo']);
    assert.deepEqual(await contact(b, ids, nameB), await contact(a, aIds, nameA));
    assert.deepEqual(await linked(t, b.secret, `/v1/messages/${ids.message?.['m-1']}`, '$files', nameB), ['f-shot']);
    const mail = async (ws: string, name: (id: string) => string) => {
      const key = await keyFor(t, ws, null);
      const list = (await ok<{ data: Entity[] }>(t, key, '/v1/emails')).data;
      return Promise.all(list.map((e) => linked(t, key, `/v1/emails/${e.id}`, '$attachment', name)));
    };
    assert.deepEqual((await mail(b.workspaceId, nameB)).toSorted(), [['f-logo'], [report, photo]].toSorted());
    assert.deepEqual(await mail(b.workspaceId, nameB), await mail(a.workspaceId, nameA));

    // Without --files: no file line and no link to a file, and the export imports cleanly.
    const bare = join(t.tdb.dataDir, `bare-${a.workspaceId}.ndjson`);
    assert.equal((await rolodex(t, ['export', '--workspace', a.workspaceId, bare])).code, 0);
    const plain = lines(bare);
    assert.ok(!plain.some((l) => l.object === 'file'));
    assert.ok(!plain.some((l) => /"\$(files|attachment)"/.test(JSON.stringify(l))), 'no links to files');
    const c = await seedWorkspace(t);
    const imC = await rolodex(t, ['import', '--workspace', c.workspaceId, bare, '--json']);
    assert.equal(imC.code, 0, imC.err);
    const cIds = JSON.parse(imC.out) as { ids: Ids; counts: Record<string, number> };
    assert.equal(cIds.counts.file, undefined);
    assert.deepEqual(await contact(c, cIds.ids, (id) => id), []);
  });

  test('a file whose key holds other bytes than recorded (another size, a blob cut short) fails the export, naming it', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const bytes = Buffer.from('the bytes as recorded');
    const f = await uploadFile(t, a.secret, bytes, { filename: 'cut.txt', mimeType: 'text/plain' });
    const key = (await t.deps.db.kysely.selectFrom('files').select('blob_key').where('id', '=', f.id).executeTakeFirstOrThrow()).blob_key as string;
    const damages: [string, () => Promise<unknown>, RegExp][] = [
      ['shorter', () => t.deps.blobs.put(key, Readable.from([bytes.subarray(0, 4)]), { maxBytes: bytes.length }), /are 4 bytes, not the 21 recorded/],
      // Its bytes are there, the trailer that vouches for them is not.
      ['cut short', () => truncate(join(t.config.dataDir, 'blobs', `${key}.blob`), 10), /are damaged/],
    ];
    for (const [what, damage, says] of damages) {
      await damage();
      const dir = join(t.tdb.dataDir, `cut-${a.workspaceId}`);
      const file = join(t.tdb.dataDir, `cut-${a.workspaceId}.ndjson`);
      const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, '--files', dir, file]);
      assert.equal(ex.code, 1, what);
      assert.match(ex.err, new RegExp(`the bytes of the file ${f.id} in blob storage ${says.source}`), what);
      assert.doesNotMatch(ex.err, /\n\s+at /, `${what}: one line, no stack`);
      assert.ok(!existsSync(dir) && !existsSync(file), what);
    }
  });

  test('a failed export removes the DIR it made and leaves one that existed', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const f = await uploadFile(t, a.secret, Buffer.from('gone'), { filename: 'gone.txt', mimeType: 'text/plain' });
    const row = await t.deps.db.kysely.selectFrom('files').select('blob_key').where('id', '=', f.id).executeTakeFirstOrThrow();
    await t.deps.blobs.delete(row.blob_key as string);

    const dir = join(t.tdb.dataDir, `failed-${a.workspaceId}`);
    const file = join(t.tdb.dataDir, `failed-${a.workspaceId}.ndjson`);
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, '--files', dir, file]);
    assert.equal(ex.code, 1);
    assert.match(ex.err, new RegExp(`the bytes of the file ${f.id} are missing from blob storage`));
    assert.ok(!existsSync(dir) && !existsSync(file));

    mkdirSync(dir);
    writeFileSync(join(dir, 'kept'), 'x');
    assert.equal((await rolodex(t, ['export', '--workspace', a.workspaceId, '--files', dir, file])).code, 1);
    assert.deepEqual(readdirSync(dir), ['kept']);
    assert.ok(!existsSync(file));

    // A DIR that cannot be made although its parent exists (all of /proc): one line, where Node's
    // own recursive mkdir never returned.
    const proc = await rolodex(t, ['export', '--workspace', a.workspaceId, '--files', '/proc/rolodex-export/x', file]);
    assert.equal(proc.code, 1);
    assert.match(proc.err, /cannot write \/proc\/rolodex-export\/x: ENOENT/);
  });
});
