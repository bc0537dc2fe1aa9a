// What creates the database (docs/cli.md §What creates the database): given a DATA_DIR without
// one (a mistyped DATA_DIR), a command that works on what a database holds or only reads it is
// refused with one line naming where it looked, exit code 1, and creates nothing; before, it made
// the directory and an empty migrated database there and answered as if the workspace were empty
// (`rolodex workspace list`: "no workspaces", exit 0). Only `serve`, `migrate`, `workspace create`
// and `demo` create it (and `restore` puts one in place). On PostgreSQL DATA_DIR holds no
// database, and a command that writes nothing there makes no directory either.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

async function run(env: Record<string, string>, args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), env, isTty: false };
  const code = await main(args, io);
  return { code, out: out.join('\n'), err };
}

for (const dialect of testDialects()) {
  describe(`a DATA_DIR without a database [${dialect}]`, () => {
    let tdb: TestDb;
    let tmp: string;
    before(async () => {
      tdb = await createTestDb(dialect);
      tmp = mkdtempSync(join(tmpdir(), 'rolodex-typo-'));
    });
    after(async () => {
      rmSync(tmp, { recursive: true, force: true });
      await tdb.drop();
    });
    const envFor = (dataDir: string): Record<string, string> => ({ DATA_DIR: dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) });

    test('a command that needs what a database holds is one line and exit 1, and creates nothing', async () => {
      const lines = join(tmp, 'data.ndjson');
      writeFileSync(lines, '{"object": "account", "externalId": "a1", "fields": {"$name": "Acme"}}\n');
      const commands: string[][] = [
        ['workspace', 'list'],
        ['workspace', 'set', '--workspace', 'ws_x', '--default-country', 'DE'],
        ['user', 'list', '--workspace', 'ws_x'],
        ['user', 'create', '--workspace', 'ws_x', '--email', 'ann@x.test', '--name', 'Ann'],
        ['key', 'list', '--workspace', 'ws_x'],
        ['key', 'create', '--workspace', 'ws_x'],
        ['key', 'revoke', 'key_x'],
        ['export', '--workspace', 'ws_x', join(tmp, 'out.ndjson')],
        ['import', '--workspace', 'ws_x', lines],
        ['backup', join(tmp, 'backup')],
        ['trash', 'list', '--workspace', 'ws_x'],
        ['webhook', 'list'],
        ['webhook', 'remove', 'whk_x'],
        ['channel', 'list', '--workspace', 'ws_x'],
        ['mailbox', 'list', '--workspace', 'ws_x'],
        ['knowledge', 'list', '--workspace', 'ws_x'],
        ['definition', 'list', '--workspace', 'ws_x', '--type', 'account'],
      ];
      for (const args of commands) {
        const typo = join(tmp, 'nope', 'data');
        const r = await run(envFor(typo), args);
        const what = args.slice(0, 2).join(' ');
        if (dialect === 'sqlite') {
          assert.equal(r.code, 1, `${what}: ${r.out}`);
          assert.deepEqual(r.err, [`rolodex ${args[0]}: no database at ${typo}/rolodex.db: is DATA_DIR right? (\`rolodex migrate\` creates one)`], what);
        }
        assert.equal(existsSync(join(tmp, 'nope')), false, `${what}: no DATA_DIR made`);
        assert.equal(existsSync(join(tmp, 'out.ndjson')), false, `${what}: no export file`);
        // On PostgreSQL a backup writes its directory (how to pg_dump the database), as it should.
        if (dialect === 'sqlite') assert.equal(existsSync(join(tmp, 'backup')), false, `${what}: no backup directory`);
        rmSync(join(tmp, 'backup'), { recursive: true, force: true });
      }
    });

    test('`migrate` and `workspace create` create it, and the commands then work on it', async () => {
      for (const first of [['migrate'], ['workspace', 'create', '--name', 'Acme']]) {
        const dataDir = join(tmp, `new-${first[0]}`, 'data');
        const made = await run(envFor(dataDir), first);
        assert.equal(made.code, 0, made.err.join('\n'));
        if (dialect === 'sqlite') assert.equal(existsSync(join(dataDir, 'rolodex.db')), true, first.join(' '));
        const list = await run(envFor(dataDir), ['workspace', 'list']);
        assert.equal(list.code, 0, list.err.join('\n'));
        if (dialect === 'sqlite') assert.match(list.out, first[0] === 'migrate' ? /^no workspaces$/ : /^ws_\w+ {2}Acme$/);
      }
    });
  });
}
