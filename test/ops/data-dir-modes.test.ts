// What the server and the CLI make in DATA_DIR is readable by their user alone, whatever the umask
// (docs/deploy.md §The data directory's modes). Under the usual umask 022, a DATA_DIR the server
// made was 0755, and rolodex.db with its -wal and -shm 0644, the blob directories 0755 and the
// blobs 0640: every user of the machine could read the database, which holds the webhooks' signing
// secrets and every workspace's data, and list the blobs. A restore into a new DATA_DIR made it
// 0755 too. A DATA_DIR that exists keeps its mode, and the server says at start, in one line, when
// other users may read it. The children inherit this process's umask, set to 022 here.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { rolodexCli, startServerProcess, type ServerProcess } from '../helpers/process.ts';

process.umask(0o022);

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Every directory and file under `dir`, `dir` included, with its mode. */
function modesUnder(dir: string): { dirs: string[]; files: string[] } {
  const out = { dirs: [dir], files: [] as string[] };
  for (const name of readdirSync(dir, { recursive: true })) {
    const path = join(dir, String(name));
    (statSync(path).isDirectory() ? out.dirs : out.files).push(path);
  }
  return out;
}

function assertOwnerOnly(dir: string): void {
  const { dirs, files } = modesUnder(dir);
  assert.ok(files.length > 0, `${dir} holds files`);
  for (const d of dirs) assert.equal(mode(d), '700', `${d} is a directory of its owner's alone`);
  for (const f of files) assert.equal(mode(f), '600', `${f} is readable by its owner alone`);
}

/** The server's warnings about DATA_DIR's mode, in its log. */
const warnings = (output: string) => output.split('\n').filter((line) => line.includes('is readable by other users of this machine'));

for (const dialect of testDialects()) {
  describe(`DATA_DIR's modes [${dialect}]`, () => {
    let tdb: TestDb | undefined;
    let server: ServerProcess | undefined;
    let db: Record<string, string>;
    const dirs: string[] = [];
    const tmp = (name: string) => {
      const d = mkdtempSync(join(tmpdir(), `rolodex-modes-${name}-`));
      dirs.push(d);
      return d;
    };
    before(async () => {
      if (dialect === 'postgres') tdb = await createTestDb('postgres');
      db = { DATABASE_URL: tdb?.databaseUrl ?? '' };
    });
    after(async () => {
      await server?.stop('SIGKILL');
      await tdb?.drop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    test('what the server, a command and a restore make in DATA_DIR is its owner alone, under umask 022', async () => {
      const dataDir = join(tmp('serve'), 'data');
      server = await startServerProcess({ DATA_DIR: dataDir, ...db });
      assert.equal(mode(dataDir), '700', 'DATA_DIR, made by the server');
      assert.equal(mode(join(dataDir, 'signing-secret')), '600');
      if (dialect === 'sqlite') {
        for (const name of ['rolodex.db', 'rolodex.db-wal', 'rolodex.db-shm']) assert.equal(mode(join(dataDir, name)), '600', name);
      }
      const demo = rolodexCli({ DATA_DIR: dataDir, ...db }, 'demo', '--json');
      assert.equal(demo.code, 0, demo.stderr);
      assertOwnerOnly(join(dataDir, 'blobs'));
      assert.deepEqual(warnings(server.output()), [], 'a DATA_DIR the server made is closed to other users');
      await server.stop();
      server = undefined;

      // A backup whose files came back with the umask's modes (a tar unpacked by another user).
      const backup = join(tmp('backup'), 'b');
      const backedUp = rolodexCli({ DATA_DIR: dataDir, ...db }, 'backup', backup);
      assert.equal(backedUp.code, 0, backedUp.stderr);
      for (const path of [backup, ...readdirSync(backup, { recursive: true }).map((name) => join(backup, String(name)))])
        chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
      const restored = join(tmp('restore'), 'data');
      const r = rolodexCli({ DATA_DIR: restored, ...db }, 'restore', backup);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(mode(restored), '700', 'DATA_DIR, made by the restore');
      assert.equal(mode(join(restored, 'signing-secret')), '600');
      if (dialect === 'sqlite') assert.equal(mode(join(restored, 'rolodex.db')), '600');
      assertOwnerOnly(join(restored, 'blobs'));
    });

    test('`rolodex migrate` makes DATA_DIR and the embedded database its owner alone', () => {
      const dataDir = join(tmp('migrate'), 'data');
      const r = rolodexCli({ DATA_DIR: dataDir, ...db }, 'migrate');
      assert.equal(r.code, 0, r.stderr);
      if (dialect === 'postgres') return assert.equal(existsSync(dataDir), false, 'on PostgreSQL nothing is written there');
      assert.equal(mode(dataDir), '700');
      for (const name of readdirSync(dataDir)) assert.equal(mode(join(dataDir, name)), '600', name);
    });

    test('a DATA_DIR other users may read keeps its mode, and the server says so in one line', async () => {
      const dataDir = join(tmp('open'), 'data');
      mkdirSync(dataDir, { mode: 0o755 });
      if (dialect === 'sqlite') {
        assert.equal(rolodexCli({ DATA_DIR: dataDir, ...db }, 'migrate').code, 0);
        chmodSync(join(dataDir, 'rolodex.db'), 0o644);
      }
      server = await startServerProcess({ DATA_DIR: dataDir, WORKERS: '2', ...db });
      const said = warnings(server.output());
      await server.stop();
      server = undefined;
      assert.equal(said.length, 1, said.join('\n'));
      const line = JSON.parse(said[0]!) as { level: number; msg: string };
      assert.equal(line.level, 40, 'a warning');
      const modes = dialect === 'sqlite' ? 'mode 0755, rolodex.db 0644' : 'mode 0755';
      assert.equal(
        line.msg,
        `DATA_DIR ${dataDir} is readable by other users of this machine (${modes}): chmod 700 ${dataDir} keeps its database, blobs and signing secret to this user`,
      );
      assert.equal(mode(dataDir), '755', 'the operator chose it');

      chmodSync(dataDir, 0o700);
      server = await startServerProcess({ DATA_DIR: dataDir, ...db });
      await server.stop();
      assert.deepEqual(warnings(server.output()), [], 'closed by chmod 700, it is not named again');
      server = undefined;
    });
  });
}
