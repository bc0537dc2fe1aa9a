// `rolodex backup DIR` while the server's database is open, then `rolodex restore DIR` into a fresh
// DATA_DIR: a server started there answers the same list and the same file bytes through the API.
// On PostgreSQL the command gives pg_dump guidance and carries the local blobs.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import type { Io } from '../../src/cli/io.ts';
import { buildTestApp, call, headers, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { uploadFile } from '../helpers/files.ts';
import { startServerProcess, type ServerProcess } from '../helpers/process.ts';

function cli(env: Record<string, string>) {
  let out = '';
  let err = '';
  const io: Io = { out: (t) => void (out += t + '\n'), err: (t) => void (err += t + '\n'), env, isTty: false };
  return { io, out: () => out, err: () => err };
}

/** A whole SQLite database of another program in place of the file `path`. */
function foreignDatabase(path: string): void {
  rmSync(path);
  const db = new DatabaseSync(path);
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES (1)');
  db.close();
}

for (const dialect of testDialects()) {
  describe(`backup and restore [${dialect}]`, () => {
    let t: TestApp;
    let server: ServerProcess | undefined;
    const dirs: string[] = [];
    const tmp = (name: string) => {
      const d = mkdtempSync(join(tmpdir(), `rolodex-${name}-`));
      dirs.push(d);
      return d;
    };
    before(async () => (t = await buildTestApp(dialect)));
    after(async () => {
      await server?.stop('SIGKILL');
      await t.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    test('a restored DATA_DIR serves the same list and file', async () => {
      const { secret } = await seedWorkspace(t);
      const list = (await call(t, secret, 'POST', '/v1/lists', { fields: { $name: 'Kept', $objectType: 'contact' } })).json<{ id: string }>();
      const bytes = Buffer.from('the bytes of a file that must survive a backup\n');
      const file = await uploadFile(t, secret, bytes, { filename: 'kept.txt', mimeType: 'text/plain' });
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};

      const dir = join(tmp('backup'), 'b');
      const b = cli({ DATA_DIR: t.tdb.dataDir, ...db });
      assert.equal(await main(['backup', dir], b.io), 0, b.err());
      // The test's schema is named in its URL: the dump is of that schema alone, not the database's others.
      if (dialect === 'postgres') assert.match(b.out(), new RegExp(`pg_dump --format=custom --schema=${t.tdb.schema} `));
      assert.match(b.out(), dialect === 'sqlite' ? /backed up rolodex\.db, blobs\/, signing-secret/ : /backed up blobs\/, signing-secret/);
      const again = cli({ DATA_DIR: t.tdb.dataDir, ...db });
      assert.equal(await main(['backup', dir], again.io), 1, 'a backup never overwrites another');
      const inFile = cli({ DATA_DIR: t.tdb.dataDir, ...db });
      assert.equal(await main(['backup', join(dir, 'backup.json', 'x')], inFile.io), 1);
      assert.match(inFile.err(), /^rolodex backup: cannot write .*: ENOTDIR/);
      // Where a directory cannot be made although its parent exists (all of /proc), Node's own
      // recursive mkdir never returned.
      const inProc = cli({ DATA_DIR: t.tdb.dataDir, ...db });
      assert.equal(await main(['backup', '/proc/rolodex-backup/x'], inProc.io), 1);
      assert.match(inProc.err(), /^rolodex backup: cannot write \/proc\/rolodex-backup\/x: ENOENT/);

      // A DATA_DIR that does not exist yet, as in docs/deploy.md §Backups: the restore makes it.
      const fresh = join(tmp('restored'), 'data');
      const r = cli({ DATA_DIR: fresh, ...db });
      assert.equal(await main(['restore', dir], r.io), 0, r.err());
      const twice = cli({ DATA_DIR: fresh, ...db });
      assert.equal(await main(['restore', dir], twice.io), 1, 'restore only into an empty DATA_DIR');
      assert.match(twice.err(), dialect === 'sqlite' ? /already holds a database/ : /blobs is not empty/);

      server = await startServerProcess({ DATA_DIR: fresh, ...db });
      const get = (path: string) => fetch(`${server!.baseUrl}${path}`, { headers: headers(secret) });
      const got = await get(`/v1/lists/${list.id}`);
      assert.equal(got.status, 200);
      assert.equal(((await got.json()) as { fields: { $name: { value: string } } }).fields.$name.value, 'Kept');
      const url = (await (await get(`/v1/files/${file.id}/url`)).json()) as { url: string };
      const down = await fetch(url.url.replace(/^https?:\/\/[^/]+/, server.baseUrl));
      assert.equal(down.status, 200);
      assert.deepEqual(Buffer.from(await down.arrayBuffer()), bytes);
    });

    test('a damaged or foreign backup, or a DATA_DIR holding blobs, is refused before anything is restored', async () => {
      const { secret } = await seedWorkspace(t);
      await uploadFile(t, secret, Buffer.from('bytes\n'), { filename: 'b.txt', mimeType: 'text/plain' });
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};
      const good = join(tmp('whole'), 'b');
      assert.equal(await main(['backup', good], cli({ DATA_DIR: t.tdb.dataDir, ...db }).io), 0);
      const damage: [string, (dir: string) => void, RegExp][] = [
        [
          'a foreign manifest',
          (d) => writeFileSync(join(d, 'backup.json'), '{"name":"x"}'),
          /is not a backup made by `rolodex backup` \(backup\.json is not its manifest\)/,
        ],
        // There is a manifest: the refusal said "no backup.json".
        [
          'a manifest cut short',
          (d) => truncateSync(join(d, 'backup.json'), 20),
          /is not a backup made by `rolodex backup` \(backup\.json is not its manifest\)/,
        ],
        ['no manifest', (d) => rmSync(join(d, 'backup.json')), /is not a backup made by `rolodex backup` \(no backup\.json\)/],
        ['a newer format', (d) => writeFileSync(join(d, 'backup.json'), '{"format":2,"database":"sqlite","files":[]}'), /is a backup of format 2; /],
        ['no blobs', (d) => rmSync(join(d, 'blobs'), { recursive: true }), /is damaged: blobs\/ is missing/],
        ['an empty signing secret', (d) => writeFileSync(join(d, 'signing-secret'), ''), /is damaged: signing-secret does not hold/],
      ];
      if (dialect === 'sqlite')
        damage.push(
          ['no database', (d) => rmSync(join(d, 'rolodex.db')), /is damaged: rolodex\.db is missing/],
          ['a database cut short', (d) => truncateSync(join(d, 'rolodex.db'), 40_000), /is damaged: rolodex\.db is not a whole database/],
          ['a database cut to nothing', (d) => truncateSync(join(d, 'rolodex.db'), 0), /is damaged: rolodex\.db is not a whole database/],
          // Whole, but not rolodex's: restored, it left a DATA_DIR that every command refused.
          [
            "another program's database",
            (d) => foreignDatabase(join(d, 'rolodex.db')),
            /is damaged: rolodex\.db is no rolodex database: it holds another program's tables \(notes\)\n$/,
          ],
        );
      for (const [name, harm, message] of damage) {
        const dir = join(tmp('damaged'), 'b');
        cpSync(good, dir, { recursive: true });
        harm(dir);
        const target = tmp('target');
        const r = cli({ DATA_DIR: target, ...db });
        assert.equal(await main(['restore', dir], r.io), 1, name);
        assert.match(r.err(), new RegExp(`^rolodex restore: .*${message.source}`), name);
        // Not even a signing secret: only a server makes one (docs/config.md §Data directory).
        assert.deepEqual(readdirSync(target), [], `${name}: nothing restored`);
        // Nor a DATA_DIR that did not exist.
        const absent = join(tmp('absent'), 'data');
        assert.equal(await main(['restore', dir], cli({ DATA_DIR: absent, ...db }).io), 1, name);
        assert.equal(existsSync(absent), false, `${name}: no DATA_DIR made`);
      }
      // Blobs in DATA_DIR were found only after the database had been copied in, and a second
      // attempt then found a database.
      const target = tmp('target');
      mkdirSync(join(target, 'blobs', 'ws_x'), { recursive: true });
      const r = cli({ DATA_DIR: target, ...db });
      assert.equal(await main(['restore', good], r.io), 1);
      assert.match(r.err(), /blobs is not empty/);
      assert.deepEqual(readdirSync(target).sort(), ['blobs']);
      rmSync(join(target, 'blobs'), { recursive: true });
      const again = cli({ DATA_DIR: target, ...db });
      assert.equal(await main(['restore', good], again.io), 0, again.err());
    });

    // Reading the configuration made DATA_DIR and a signing secret in it: a mistyped DATA_DIR given
    // to a backup was left behind, holding a secret nothing asked for.
    test('a backup from a DATA_DIR that does not exist is refused and makes nothing', async () => {
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};
      const typo = join(tmp('typo'), 'data');
      const dir = join(tmp('into'), 'b');
      const r = cli({ DATA_DIR: typo, ...db });
      const code = await main(['backup', dir], r.io);
      if (dialect === 'sqlite') {
        assert.equal(code, 1);
        assert.match(r.err(), /^rolodex backup: no database at \S+\/data\/rolodex\.db: is DATA_DIR right\?/);
        assert.equal(existsSync(dir), false);
      } else assert.equal(code, 0, r.err());
      assert.equal(existsSync(typo), false, 'no DATA_DIR made');
    });

    // The server deletes blobs no row points to any more at any moment; one deleted between the
    // listing of blobs/ and its copy failed the backup with a stack trace.
    test('blobs deleted while the backup copies them are left out, and the backup completes', async () => {
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};
      const garbage = join(t.tdb.dataDir, 'blobs', 'ws_garbage');
      mkdirSync(garbage, { recursive: true });
      const names = Array.from({ length: 3000 }, (_, i) => `fil_${i}`);
      for (const name of names) writeFileSync(join(garbage, name), 'x'.repeat(2000));
      const dir = join(tmp('vanishing'), 'b');
      const b = cli({ DATA_DIR: t.tdb.dataDir, ...db });
      let finished = false;
      const done = main(['backup', dir], b.io).finally(() => (finished = true));
      // Deletes from the end of the directory as soon as the copy of blobs/ has begun.
      while (!finished && !existsSync(join(dir, 'blobs'))) await sleep(1);
      for (const name of names.reverse()) {
        if (finished) break;
        await rm(join(garbage, name), { force: true });
      }
      assert.equal(await done, 0, b.err());
      assert.match(b.out(), /blobs? (was|were) deleted by the server while the backup ran, and left out/);
      rmSync(garbage, { recursive: true, force: true });
    });

    // Any other failure while copying (a full disk, a blob that cannot be read) ended in a stack
    // trace and left a directory without a manifest, which passed for a backup.
    test('a backup that fails while copying is one line, exit 1, and leaves nothing', async () => {
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};
      const blobs = join(t.tdb.dataDir, 'blobs');
      mkdirSync(blobs, { recursive: true });
      // A blob that cannot be copied as a file, whoever runs the test (root reads any file).
      symlinkSync(tmpdir(), join(blobs, 'unreadable'));
      try {
        const dir = join(tmp('failing'), 'b');
        const b = cli({ DATA_DIR: t.tdb.dataDir, ...db });
        assert.equal(await main(['backup', dir], b.io), 1);
        assert.match(b.err(), /^rolodex backup: the backup failed: .*; nothing was kept in /);
        assert.equal(b.err().trim().split('\n').length, 1, b.err());
        assert.equal(existsSync(dir), false);
      } finally {
        rmSync(join(blobs, 'unreadable'));
      }
    });

    test('with S3, the backup says that the blobs are in the bucket, not in the backup', async () => {
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};
      const dir = join(tmp('s3'), 'b');
      const b = cli({ DATA_DIR: t.tdb.dataDir, S3_BUCKET: 'rolodex-blobs', ...db });
      assert.equal(await main(['backup', dir], b.io), 0, b.err());
      assert.doesNotMatch(b.out(), /blobs\/,/);
      assert.match(b.out(), /Blobs are in the S3 bucket "rolodex-blobs": use the store's versioning or replication\./);
    });

    // SQLite's online backup copied a hundred pages at a time and started over whenever another
    // connection wrote in between: under a steady stream of writes it never ended.
    // SQLite only: pg_dump backs up PostgreSQL.
    if (dialect === 'sqlite')
      test('a backup ends while another connection writes all the time', async () => {
        const writer = new DatabaseSync(join(t.tdb.dataDir, 'rolodex.db'), { timeout: 5000 });
        writer.exec('create table backup_filler (v blob)');
        const fill = writer.prepare('insert into backup_filler (v) values (randomblob(4000))');
        writer.exec('begin');
        for (let i = 0; i < 3000; i++) fill.run();
        writer.exec('commit');
        const add = writer.prepare('insert into backup_filler (v) values (randomblob(100))');
        const writes = setInterval(() => add.run(), 1);
        const dir = join(tmp('busy'), 'b');
        const b = cli({ DATA_DIR: t.tdb.dataDir });
        const done = main(['backup', dir], b.io);
        // Unref'd: once the backup has ended, the timer does not hold the file's process open.
        const inTime = await Promise.race([done.then(() => true), sleep(20_000, false, { ref: false })]);
        clearInterval(writes);
        const code = await done;
        writer.exec('drop table backup_filler');
        writer.close();
        assert.ok(inTime, 'the backup ended within 20 s while writes went on');
        assert.equal(code, 0, b.err());
        const copy = new DatabaseSync(join(dir, 'rolodex.db'), { readOnly: true });
        try {
          assert.equal((copy.prepare('pragma quick_check').get() as { quick_check: string }).quick_check, 'ok');
          assert.ok((copy.prepare('select count(*) as n from backup_filler').get() as { n: number }).n >= 3000);
        } finally {
          copy.close();
        }
      });
  });
}
