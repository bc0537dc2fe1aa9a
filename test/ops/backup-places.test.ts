// Where a backup is written and where a restore lands (docs/deploy.md §Backups): a backup
// directory inside the blob directory it copies is refused before anything is made (the copy met
// its own copy at every level, until the path was too long); a backup that fails removes the
// parent directories it made for its directory too; and a restore refuses a DATA_DIR holding the
// write-ahead log of a database removed without it, which SQLite applied to the restored database
// at its first opening, damaging it. A restore says where the blobs are when the restored server
// would not find them (a backup's bucket it does not read, or a bucket it reads instead of them),
// and refuses a backup of the other kind of database than the one configured. A rolodex.db that
// holds nothing (a `touch`ed file) was refused as a database already there; it is replaced, and a
// file holding anything else is refused and left as it was. A signing-secret other than the
// backup's in DATA_DIR is refused too, where the restore replaced it. A DATA_DIR that is a file is
// named as such by both commands. A restore from a DIR that does not exist, or is a file, says
// that, not that DIR lacks a manifest. What a backup writes is closed to other users, in a DIR
// that existed too.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import type { Io } from '../../src/cli/io.ts';
import { buildTestApp, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { uploadFile } from '../helpers/files.ts';

function cli(env: Record<string, string>) {
  let out = '';
  let err = '';
  const io: Io = { out: (t) => void (out += t + '\n'), err: (t) => void (err += t + '\n'), env, isTty: false };
  return { io, out: () => out, err: () => err };
}

for (const dialect of testDialects()) {
  describe(`where backups and restores write [${dialect}]`, () => {
    let t: TestApp;
    let env: Record<string, string>;
    const dirs: string[] = [];
    const tmp = (name: string) => {
      const d = mkdtempSync(join(tmpdir(), `rolodex-${name}-`));
      dirs.push(d);
      return d;
    };
    before(async () => {
      t = await buildTestApp(dialect);
      env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
      const { secret } = await seedWorkspace(t);
      await uploadFile(t, secret, Buffer.from('bytes to back up\n'), { filename: 'a.txt', mimeType: 'text/plain' });
    });
    after(async () => {
      await t.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    test('a backup directory inside the blob directory, named or through a link, is refused and nothing is made', async () => {
      const blobs = join(t.tdb.dataDir, 'blobs');
      const before = readdirSync(blobs).sort();
      const link = join(tmp('link'), 'to-blobs');
      symlinkSync(blobs, link);
      for (const dir of [join(blobs, 'backup'), join(blobs, 'nested', 'backup'), blobs + '/', join(link, 'backup')]) {
        const b = cli(env);
        assert.equal(await main(['backup', dir], b.io), 1, `${dir}: ${b.out()}`);
        assert.match(b.err(), /^rolodex backup: \S+ is inside \S+\/blobs, which the backup copies: back up into a directory outside it\n$/, dir);
        assert.deepEqual(readdirSync(blobs).sort(), before, `${dir}: nothing made`);
      }
      // Beside the blobs, in DATA_DIR, a backup is made as anywhere else.
      const beside = join(t.tdb.dataDir, 'backups', 'today');
      const b = cli(env);
      assert.equal(await main(['backup', beside], b.io), 0, b.err());
      assert.equal(existsSync(join(beside, 'backup.json')), true);
      rmSync(join(t.tdb.dataDir, 'backups'), { recursive: true });
    });

    // Into a directory made beforehand (`mkdir /backups/today`, mode 0755), rolodex.db was written
    // readable by every user of the machine: every workspace's data, webhook signing secrets.
    test('what a backup writes is readable by no other user, in a directory that existed too', async () => {
      const dir = join(tmp('existing'), 'b');
      mkdirSync(dir, { mode: 0o755 });
      const b = cli(env);
      assert.equal(await main(['backup', dir], b.io), 0, b.err());
      const written = readdirSync(dir, { recursive: true }).map((name) => join(dir, String(name)));
      assert.ok(written.some((path) => path.endsWith('signing-secret')));
      for (const name of ['rolodex.db', 'signing-secret', 'backup.json'])
        if (existsSync(join(dir, name))) assert.equal(statSync(join(dir, name)).mode & 0o077, 0, `${name} is its owner's alone`);
      for (const path of written) assert.equal(statSync(path).mode & 0o007, 0, `${path} is closed to other users`);
    });

    test('a backup that fails removes the parent directories it made for its directory', async () => {
      const blobs = join(t.tdb.dataDir, 'blobs');
      // A blob that cannot be copied as a file, whoever runs the test (root reads any file).
      symlinkSync(tmpdir(), join(blobs, 'unreadable'));
      try {
        const root = tmp('parents');
        const b = cli(env);
        assert.equal(await main(['backup', join(root, 'new', 'deeper', 'b')], b.io), 1);
        assert.match(b.err(), /^rolodex backup: the backup failed: /);
        assert.deepEqual(readdirSync(root), [], 'no directory left behind');
      } finally {
        rmSync(join(blobs, 'unreadable'));
      }
    });

    // A backup made with S3_BUCKET holds no blob, and its restore into a DATA_DIR whose server
    // reads no bucket said nothing of them: the restored files had no bytes.
    test('a restore says where the blobs are when the restored server would not look there', async () => {
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};
      const inBucket = join(tmp('s3'), 'b');
      assert.equal(await main(['backup', inBucket], cli({ ...env, S3_BUCKET: 'kept-blobs', S3_PREFIX: 'crm/' }).io), 0);
      const local = join(tmp('local'), 'b');
      assert.equal(await main(['backup', local], cli(env).io), 0);
      const restore = async (dir: string, more: Record<string, string>) => {
        const r = cli({ DATA_DIR: join(tmp('target'), 'data'), ...db, ...more });
        assert.equal(await main(['restore', dir], r.io), 0, r.err());
        return r.out();
      };
      const elsewhere =
        /The backup's blobs are not in it but in the S3 bucket "kept-blobs" under "crm\/": start the server with S3_BUCKET=kept-blobs S3_PREFIX=crm\/ and that store's settings, or its files have no bytes\./;
      assert.match(await restore(inBucket, {}), elsewhere);
      assert.match(await restore(inBucket, { S3_BUCKET: 'other' }), elsewhere);
      assert.doesNotMatch(await restore(inBucket, { S3_BUCKET: 'kept-blobs', S3_PREFIX: 'crm/' }), /The backup's blobs/);
      // Kept under no prefix, restored where S3_PREFIX names one: the note said to set the bucket
      // already set, not to unset the prefix.
      const noPrefix = join(tmp('s3-root'), 'b');
      assert.equal(await main(['backup', noPrefix], cli({ ...env, S3_BUCKET: 'kept-blobs' }).io), 0);
      assert.match(
        await restore(noPrefix, { S3_BUCKET: 'kept-blobs', S3_PREFIX: 'crm/' }),
        /The backup's blobs are not in it but in the S3 bucket "kept-blobs", under no prefix: start the server with S3_BUCKET=kept-blobs, S3_PREFIX unset and that store's settings, or its files have no bytes\./,
      );
      assert.match(
        await restore(local, { S3_BUCKET: 'kept-blobs' }),
        /The backup's blobs are restored into \S+\/data\/blobs, but S3_BUCKET is set and the server reads the bucket "kept-blobs": copy them into it, or unset S3_BUCKET\./,
      );
      assert.doesNotMatch(await restore(local, {}), /The backup's blobs/);
    });

    // A PostgreSQL backup restored without DATABASE_URL said "restored nothing" and put its blobs
    // beside no database, where the server then started on a new empty SQLite one; the opposite
    // was refused. Either way the restore is refused before it writes, naming what to set.
    test('a backup restored into the other kind of database is refused, saying what to set, and nothing is made', async () => {
      const backup = join(tmp('backup'), 'b');
      assert.equal(await main(['backup', backup], cli(env).io), 0);
      const target = join(tmp('target'), 'data');
      const other: Record<string, string> =
        dialect === 'sqlite' ? { DATA_DIR: target, DATABASE_URL: 'postgres://rolodex@db:5432/rolodex' } : { DATA_DIR: target };
      const r = cli(other);
      assert.equal(await main(['restore', backup], r.io), 1, r.out());
      assert.equal(
        r.err(),
        dialect === 'sqlite'
          ? 'rolodex restore: this backup holds an embedded (SQLite) database, but DATABASE_URL is set: unset it to restore\n'
          : 'rolodex restore: this backup is of a PostgreSQL database, but DATABASE_URL is not set: set it to the database the restored server uses\n',
      );
      assert.equal(r.out(), '');
      assert.equal(existsSync(target), false, 'no DATA_DIR made');
    });

    // A DATA_DIR holding only a signing secret (that of a server running on PostgreSQL with no
    // local blobs, or a fresh one's) had it replaced by the backup's, silently: every upload and
    // download address that server had given out stopped working. The same secret is no loss.
    test("a restore into a DATA_DIR holding another signing secret is refused and leaves it; the backup's own is accepted", async () => {
      const backup = join(tmp('backup'), 'b');
      assert.equal(await main(['backup', backup], cli(env).io), 0);
      const theirs = readFileSync(join(backup, 'signing-secret'), 'utf8').trim();
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};
      for (const [name, held] of [
        ['another secret', `${'c7'.repeat(32)}\n`],
        ['a damaged secret', 'not hex'],
      ] as const) {
        const target = tmp('target');
        const secretFile = join(target, 'signing-secret');
        writeFileSync(secretFile, held);
        const r = cli({ DATA_DIR: target, ...db });
        assert.equal(await main(['restore', backup], r.io), 1, `${name}: ${r.out()}`);
        assert.equal(
          r.err(),
          `rolodex restore: ${secretFile} is not the backup's signing-secret, which would replace it: restore into an empty DATA_DIR, with the server stopped\n`,
        );
        assert.equal(r.out(), '');
        assert.deepEqual(readdirSync(target), ['signing-secret'], `${name}: nothing restored`);
        assert.equal(readFileSync(secretFile, 'utf8'), held, `${name}: left as it was`);
      }
      // The same bytes, written in capitals and without a line end.
      const target = tmp('target');
      writeFileSync(join(target, 'signing-secret'), theirs.toUpperCase());
      const r = cli({ DATA_DIR: target, ...db });
      assert.equal(await main(['restore', backup], r.io), 0, r.err());
      assert.equal(readFileSync(join(target, 'signing-secret'), 'utf8').trim().toLowerCase(), theirs.toLowerCase());
    });

    // A DATA_DIR that is a file (or lies under one) made every path in it fail with ENOTDIR: the
    // restore named the backup's signing-secret as another one, and a backup on PostgreSQL backed
    // up nothing, exit 0. Both name DATA_DIR, exit 1, and write nothing.
    test('a DATA_DIR that is a file is refused by backup and restore as not a directory, and nothing is written', async () => {
      const backup = join(tmp('backup'), 'b');
      assert.equal(await main(['backup', backup], cli(env).io), 0);
      assert.equal(existsSync(join(backup, 'signing-secret')), true, 'the backup holds a signing-secret');
      const db: Record<string, string> = t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {};
      const root = tmp('file');
      const file = join(root, 'data');
      writeFileSync(file, 'not a directory\n');
      for (const [dataDir, why] of [
        [file, ''],
        [join(file, 'below'), ` (${file} in its path is not one)`],
      ] as const) {
        const message = `DATA_DIR ${dataDir} is not a directory${why}: set DATA_DIR to a directory\n`;
        const r = cli({ DATA_DIR: dataDir, ...db });
        assert.equal(await main(['restore', backup], r.io), 1, r.out());
        assert.equal(r.err(), `rolodex restore: ${message}`);
        const b = cli({ DATA_DIR: dataDir, ...db });
        assert.equal(await main(['backup', join(root, 'b')], b.io), 1, b.out());
        assert.equal(b.err(), `rolodex backup: ${message}`);
        assert.equal(r.out() + b.out(), '');
        assert.deepEqual(readdirSync(root), ['data'], 'nothing written beside it');
        assert.equal(readFileSync(file, 'utf8'), 'not a directory\n', 'the file left as it was');
      }
    });

    // The write-ahead log is SQLite's: PostgreSQL's DATA_DIR holds no database.
    if (dialect === 'sqlite')
      test("a restore into a DATA_DIR holding a removed database's log is refused; without it the restore is whole", async () => {
        const backup = join(tmp('backup'), 'b');
        assert.equal(await main(['backup', backup], cli(env).io), 0);
        // A database whose last commits are still in its log, as after a crash, then removed alone.
        const crashed = tmp('crashed');
        const db = new DatabaseSync(join(crashed, 'rolodex.db'));
        db.exec('pragma journal_mode = wal; pragma wal_autocheckpoint = 0; create table t (v); insert into t values (randomblob(100000));');
        const target = tmp('target');
        copyFileSync(join(crashed, 'rolodex.db-wal'), join(target, 'rolodex.db-wal'));
        db.close();
        const r = cli({ DATA_DIR: target });
        assert.equal(await main(['restore', backup], r.io), 1, r.out());
        assert.equal(
          r.err(),
          `rolodex restore: ${target} holds rolodex.db-wal, left by a database that is no longer there, which SQLite would apply to the restored one: restore into an empty DATA_DIR\n`,
        );
        assert.deepEqual(readdirSync(target), ['rolodex.db-wal'], 'nothing restored');
        rmSync(join(target, 'rolodex.db-wal'));
        const again = cli({ DATA_DIR: target });
        assert.equal(await main(['restore', backup], again.io), 0, again.err());
        const restored = new DatabaseSync(join(target, 'rolodex.db'), { readOnly: true });
        try {
          assert.equal((restored.prepare('pragma quick_check').get() as { quick_check: string }).quick_check, 'ok');
          assert.equal((restored.prepare('select count(*) as n from workspaces').get() as { n: number }).n > 0, true);
        } finally {
          restored.close();
        }
      });

    // A `touch`ed rolodex.db was refused as "already holds a database", although it held nothing.
    if (dialect === 'sqlite')
      test('a restore replaces a rolodex.db that holds nothing, and refuses, untouched, one that holds anything', async () => {
        const backup = join(tmp('backup'), 'b');
        assert.equal(await main(['backup', backup], cli(env).io), 0);
        const sqlite = (file: string, statements: string) => {
          const db = new DatabaseSync(file);
          db.exec(statements);
          db.close();
        };
        const empty: Record<string, (file: string) => void> = {
          touched: (file) => writeFileSync(file, ''),
          'no tables': (file) => sqlite(file, 'PRAGMA user_version = 7'),
          'no tables, in WAL mode': (file) => sqlite(file, 'PRAGMA journal_mode = wal; CREATE TABLE t (v); DROP TABLE t'),
        };
        for (const [form, make] of Object.entries(empty)) {
          const target = tmp('target');
          make(join(target, 'rolodex.db'));
          const r = cli({ DATA_DIR: target });
          assert.equal(await main(['restore', backup], r.io), 0, `${form}: ${r.err()}`);
          const restored = new DatabaseSync(join(target, 'rolodex.db'), { readOnly: true });
          try {
            assert.equal((restored.prepare('select count(*) as n from workspaces').get() as { n: number }).n > 0, true, form);
          } finally {
            restored.close();
          }
        }
        const held: Record<string, [(file: string) => void, RegExp]> = {
          "another program's tables": [
            (file) => sqlite(file, 'PRAGMA journal_mode = wal; CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (1)'),
            /rolodex\.db holds another program's tables \(notes\), which a restore would overwrite: restore into an empty DATA_DIR, or move the file away if it is not needed$/,
          ],
          'not a database': [
            (file) => writeFileSync(file, 'notes kept here\n'),
            /rolodex\.db is not an empty SQLite database \(file is not a database\): restore into an empty DATA_DIR, or move/,
          ],
          'a rolodex database': [
            (file) => copyFileSync(join(backup, 'rolodex.db'), file),
            /already holds a database: restore into an empty DATA_DIR, with the server stopped$/,
          ],
        };
        for (const [form, [make, message]] of Object.entries(held)) {
          const target = tmp('target');
          const file = join(target, 'rolodex.db');
          make(file);
          const bytes = readFileSync(file);
          const r = cli({ DATA_DIR: target });
          assert.equal(await main(['restore', backup], r.io), 1, `${form}: ${r.out()}`);
          assert.match(r.err(), new RegExp(`^rolodex restore: ${target}[/ ]${message.source}`, 'm'), form);
          assert.equal(r.err().split('\n').length, 2, `${form}: one line`);
          assert.deepEqual(readFileSync(file), bytes, `${form}: left byte for byte`);
          assert.deepEqual(readdirSync(target), ['rolodex.db'], `${form}: nothing beside it`);
        }
        // An empty file beside its log: what the database holds is in the log, so it is a database.
        const target = tmp('target');
        writeFileSync(join(target, 'rolodex.db'), '');
        writeFileSync(join(target, 'rolodex.db-journal'), 'x');
        const r = cli({ DATA_DIR: target });
        assert.equal(await main(['restore', backup], r.io), 1);
        assert.match(r.err(), /already holds a database \(rolodex\.db and its log rolodex\.db-journal\)/);
        assert.deepEqual(readdirSync(target).sort(), ['rolodex.db', 'rolodex.db-journal']);
      });

    test('a restore from a DIR that does not exist, or is a file, says so in one line and writes nothing', async () => {
      const target = join(tmp('target'), 'data');
      const missing = join(tmp('from'), 'no', 'such', 'dir');
      const file = join(tmp('from'), 'a-file');
      writeFileSync(file, 'x');
      for (const [dir, message] of [
        [missing, `rolodex restore: ${missing} does not exist\n`],
        [file, `rolodex restore: ${file} is not a directory\n`],
      ] as const) {
        const r = cli({ ...env, DATA_DIR: target });
        assert.equal(await main(['restore', dir], r.io), 1, r.out());
        assert.equal(r.err(), message);
        assert.ok(!existsSync(target), 'no DATA_DIR made');
      }
    });
  });
}
