// An embedded database this process may not write stops `rolodex serve` at start with one line
// naming DATA_DIR and what to mend, and exit code 1 (docs/reliability.md §The database's
// storage): it printed "unexpected error" and a stack. Root writes a file whatever its mode, so
// under root the server runs as `nobody`, to whom the file then belongs read-only.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, rolodexCli } from '../helpers/process.ts';

const NOBODY = 65534;

test('serve on a read-only SQLite file: one line, exit code 1', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-read-only-'));
  try {
    const env = { DATA_DIR: dir, DATABASE_URL: '' };
    const migrated = rolodexCli(env, 'migrate');
    assert.equal(migrated.code, 0, migrated.stderr);
    const root = process.getuid?.() === 0;
    chmodSync(dir, 0o755);
    for (const name of readdirSync(dir)) {
      if (root) chownSync(join(dir, name), NOBODY, NOBODY);
      chmodSync(join(dir, name), name === 'signing-secret' ? 0o600 : 0o444);
    }
    if (root) chownSync(dir, NOBODY, NOBODY);
    const r = spawnSync(process.execPath, [CLI, 'serve'], {
      env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', WORKERS: '1', LOG_LEVEL: 'info' },
      encoding: 'utf8',
      timeout: 30_000,
      ...(root ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.equal(
      r.stderr,
      `rolodex serve: cannot write the database in ${dir}: the database file, or its -wal or -shm file beside it, is read-only for this process (their owner and mode, and DATA_DIR's)\n`,
    );
    assert.doesNotMatch(r.stdout, /listening/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A DATA_DIR this process may not write, around a database file it may: SQLite cannot make the
// -wal and -shm files beside it. The start printed SQLite's own words ("attempt to write a
// readonly database") instead of what to mend.
test('serve on a SQLite file in a read-only DATA_DIR: the same line, exit code 1', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-read-only-dir-'));
  try {
    const env = { DATA_DIR: dir, DATABASE_URL: '', SIGNING_SECRET: 'a-signing-secret-of-32-characters!' };
    const migrated = rolodexCli(env, 'migrate');
    assert.equal(migrated.code, 0, migrated.stderr);
    const root = process.getuid?.() === 0;
    if (root) for (const name of ['', ...readdirSync(dir)]) chownSync(join(dir, name), NOBODY, NOBODY);
    chmodSync(dir, 0o555);
    const r = spawnSync(process.execPath, [CLI, 'serve'], {
      env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', WORKERS: '1', LOG_LEVEL: 'info' },
      encoding: 'utf8',
      timeout: 30_000,
      ...(root ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.equal(
      r.stderr,
      `rolodex serve: cannot write the database in ${dir}: the database file, or its -wal or -shm file beside it, is read-only for this process (their owner and mode, and DATA_DIR's)\n`,
    );
    assert.doesNotMatch(r.stdout, /listening/);
  } finally {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});
