// What `rolodex backup` and `rolodex restore` meet that no backup of theirs wrote (docs/deploy.md
// §Backups): a DIR that is a file, a blob directory holding a FIFO, and the leftovers of a restore
// killed before it finished.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodexWith } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { uploadFile } from '../helpers/files.ts';

for (const dialect of testDialects()) {
  describe(`what backup and restore did not write [${dialect}]`, () => {
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

    test('a backup into an existing file is refused as not a directory, and the file is left as it was', async () => {
      const file = join(tmp('file'), 'backup.tar');
      writeFileSync(file, 'an earlier archive\n');
      const r = await rolodexWith(env, ['backup', file]);
      assert.equal(r.code, 1, r.out);
      assert.deepEqual(r.err, [`rolodex backup: ${file} is not a directory: back up into a new directory`]);
      assert.equal(readFileSync(file, 'utf8'), 'an earlier archive\n');
    });

    test('a FIFO in the blob directory is left out, and the backup of the blobs is whole', async () => {
      const fifo = join(t.tdb.dataDir, 'blobs', 'not-a-blob');
      execFileSync('mkfifo', [fifo]);
      try {
        const dir = join(tmp('backup'), 'b');
        // Before, the copy opened the FIFO and waited for a writer that never came, and the process
        // could not end while its open waited: a writer of the test's own ends that wait, so that
        // the test fails instead.
        const writer = setTimeout(() => closeSync(openSync(fifo, constants.O_RDWR)), 30_000);
        try {
          const r = await rolodexWith(env, ['backup', dir]);
          assert.equal(r.code, 0, r.err.join('\n'));
        } finally {
          clearTimeout(writer);
        }
        assert.ok(!existsSync(join(dir, 'blobs', 'not-a-blob')));
        const blobs = (d: string): string[] =>
          readdirSync(d, { recursive: true, withFileTypes: true })
            .filter((e) => e.isFile())
            .map((e) => e.name)
            .sort();
        const kept = blobs(join(t.tdb.dataDir, 'blobs'));
        assert.ok(kept.length > 0, 'the upload has a blob');
        assert.deepEqual(blobs(join(dir, 'blobs')), kept);
      } finally {
        rmSync(fifo);
      }
    });

    // rolodex.db.restoring is the embedded database's copy under its own name until it is checked.
    if (dialect === 'sqlite')
      test('a restore killed before it finished leaves rolodex.db.restoring, which the next restore names', async () => {
        const dir = join(tmp('backup'), 'b');
        assert.equal((await rolodexWith(env, ['backup', dir])).code, 0);
        // What a SIGKILL between the copies leaves: the database under its temporary name, the blobs.
        const target = tmp('target');
        writeFileSync(join(target, 'rolodex.db.restoring'), readFileSync(join(dir, 'rolodex.db')));
        execFileSync('cp', ['-r', join(dir, 'blobs'), join(target, 'blobs')]);
        const r = await rolodexWith({ DATA_DIR: target }, ['restore', dir]);
        assert.equal(r.code, 1, r.out);
        assert.deepEqual(r.err, [
          `rolodex restore: ${target} holds rolodex.db.restoring, left by a restore that did not finish: remove it and what that restore wrote (blobs/, signing-secret), then restore again`,
        ]);
        rmSync(join(target, 'rolodex.db.restoring'));
        rmSync(join(target, 'blobs'), { recursive: true });
        const again = await rolodexWith({ DATA_DIR: target }, ['restore', dir]);
        assert.equal(again.code, 0, again.err.join('\n'));
        assert.ok(existsSync(join(target, 'rolodex.db')));
        assert.ok(!existsSync(join(target, 'rolodex.db.restoring')));
      });
  });
}
