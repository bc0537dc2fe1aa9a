// `rolodex backup`, `restore` and `export` interrupted (Ctrl-C's SIGINT, SIGTERM) while they write:
// each removes what it wrote, says so in one line, and ends by the signal, so that a script running
// it stops too (docs/cli.md §The operator CLI).
// The signal ended the process where it stood: a backup directory without its manifest under the
// good name, and a restore's half-copied blobs, which refused the restore run again.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex, rolodexWith } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { uploadFile } from '../helpers/files.ts';
import { BIN, PATH, ROOT } from '../helpers/launch.ts';

interface Run {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<NodeJS.Signals | null>;
}

function start(env: Record<string, string>, args: string[]): Run {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { PATH, HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  return { child, stderr: () => err, exited };
}

/**
 * Stops the command as soon as `writing()` (it has begun to write), checks with `unfinished()` that
 * it had not finished, then sends `signal`: the command meets it in the middle of its work.
 */
async function interrupt(run: Run, writing: () => boolean, unfinished: () => boolean, signal: NodeJS.Signals): Promise<NodeJS.Signals | null> {
  const started = Date.now();
  while (!writing()) {
    assert.equal(run.child.exitCode, null, `the command ended before it was interrupted: ${run.stderr()}`);
    assert.ok(Date.now() - started < 60_000, 'the command began to write within 60 s');
    await sleep(1);
  }
  run.child.kill('SIGSTOP');
  try {
    assert.ok(unfinished(), 'the command had not finished when it was stopped');
  } finally {
    run.child.kill(signal);
    run.child.kill('SIGCONT');
  }
  return run.exited;
}

for (const dialect of testDialects()) {
  describe(`backup, restore and export interrupted [${dialect}]`, () => {
    let t: TestApp;
    let env: Record<string, string>;
    let workspaceId: string;
    const dirs: string[] = [];
    const tmp = (name: string) => {
      const d = mkdtempSync(join(tmpdir(), `rolodex-${name}-`));
      dirs.push(d);
      return d;
    };
    const runs: Run[] = [];
    before(async () => {
      t = await buildTestApp(dialect);
      env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
      const seeded = await seedWorkspace(t);
      workspaceId = seeded.workspaceId;
      await uploadFile(t, seeded.secret, Buffer.from('a file of the workspace\n'), { filename: 'f.txt', mimeType: 'text/plain' });
      // Blobs enough that copying them takes a while.
      const filler = join(t.tdb.dataDir, 'blobs', 'ws_filler');
      mkdirSync(filler, { recursive: true });
      for (let i = 0; i < 1500; i++) writeFileSync(join(filler, `b${i}`), Buffer.alloc(16_384, i));
      // Records enough that writing them takes a while.
      const lines = Array.from({ length: 3000 }, (_, i) =>
        JSON.stringify({ object: 'contact', externalId: `c${i}`, fields: { $email: { value: [`c${i}@example.test`], valueType: 'EMAIL' } } }),
      );
      const file = join(tmp('contacts'), 'c.ndjson');
      writeFileSync(file, lines.join('\n') + '\n');
      const imported = await rolodex(t, ['import', '--workspace', workspaceId, file]);
      assert.equal(imported.code, 0, imported.err);
    });
    after(async () => {
      for (const r of runs) if (r.child.exitCode === null) r.child.kill('SIGKILL');
      await t.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    test('a backup interrupted while it copies leaves nothing, and says so in one line', async () => {
      const parent = join(tmp('backup'), 'made');
      const dir = join(parent, 'b');
      const run = start(env, ['backup', dir]);
      runs.push(run);
      const ended = await interrupt(
        run,
        () => existsSync(join(dir, 'blobs')),
        () => !existsSync(join(dir, 'backup.json')),
        'SIGINT',
      );
      assert.equal(existsSync(parent), false, 'the directories the backup made are removed');
      assert.equal(run.stderr(), `rolodex backup: interrupted by SIGINT; nothing was kept in ${dir}\n`);
      assert.equal(ended, 'SIGINT');
    });

    test('a restore interrupted while it copies leaves DATA_DIR as it was, and runs again', async () => {
      const backup = join(tmp('whole'), 'b');
      const made = await rolodexWith(env, ['backup', backup]);
      assert.equal(made.code, 0, made.err.join('\n'));
      const target = join(tmp('restored'), 'data');
      const into = { ...env, DATA_DIR: target };
      const run = start(into, ['restore', backup]);
      runs.push(run);
      const ended = await interrupt(
        run,
        () => existsSync(join(target, 'blobs')),
        () => !existsSync(join(target, 'signing-secret')) && !existsSync(join(target, 'rolodex.db')),
        'SIGTERM',
      );
      assert.equal(existsSync(target), false, 'the DATA_DIR the restore made is removed');
      assert.equal(run.stderr(), `rolodex restore: interrupted by SIGTERM; nothing was restored into ${target}\n`);
      assert.equal(ended, 'SIGTERM');
      const again = await rolodexWith(into, ['restore', backup]);
      assert.equal(again.code, 0, again.err.join('\n'));
    });

    test('an export interrupted while it writes leaves neither its partial file nor the files directory it made', async () => {
      const out = tmp('export');
      const files = join(out, 'files');
      const file = join(out, 'w.ndjson');
      const run = start(env, ['export', '--workspace', workspaceId, '--files', files, file]);
      runs.push(run);
      const ended = await interrupt(
        run,
        () => existsSync(files) && readdirSync(out).some((name) => name.endsWith('.partial')),
        () => !existsSync(file),
        'SIGINT',
      );
      assert.deepEqual(readdirSync(out), [], 'neither the partial file nor the files directory is left');
      assert.equal(run.stderr(), `rolodex export: interrupted by SIGINT; ${file} was not written\n`);
      assert.equal(ended, 'SIGINT');
    });
  });
}
