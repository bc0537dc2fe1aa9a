// A DATA_DIR that is not a directory (docs/cli.md §A DATA_DIR that is not a directory): the server
// and every command refuse it with one line naming it, exit code 1, before they create or read
// anything. Only `backup` and `restore` did; the others named a part of it instead (`no database at
// f/rolodex.db`, `DATA_DIR f cannot be created: ENOTDIR…`) or, on PostgreSQL, worked as if nothing
// were wrong (`workspace list`, exit 0).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { rolodexWith } from '../helpers/cli.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { rolodexCli } from '../helpers/process.ts';

const run = rolodexWith;

/** One run of each command, every one that reads the configuration; `tmp` holds their paths. */
function commands(tmp: string): string[][] {
  const lines = join(tmp, 'data.ndjson');
  return [
    ['migrate'],
    ['workspace', 'create', '--name', 'Acme'],
    ['workspace', 'list'],
    ['user', 'list', '--workspace', 'ws_x'],
    ['key', 'list', '--workspace', 'ws_x'],
    ['key', 'revoke', 'key_x'],
    ['definition', 'list', '--workspace', 'ws_x', '--type', 'account'],
    ['import', '--workspace', 'ws_x', lines],
    ['export', '--workspace', 'ws_x', join(tmp, 'out.ndjson')],
    ['trash', 'list', '--workspace', 'ws_x'],
    ['webhook', 'list'],
    ['channel', 'list', '--workspace', 'ws_x'],
    ['mailbox', 'list', '--workspace', 'ws_x'],
    ['knowledge', 'list', '--workspace', 'ws_x'],
    ['demo'],
    ['backup', join(tmp, 'backup')],
    ['restore', join(tmp, 'no-backup')],
  ];
}

for (const dialect of testDialects()) {
  describe(`a DATA_DIR that is not a directory [${dialect}]`, () => {
    let tdb: TestDb;
    let tmp: string;
    let file: string;
    before(async () => {
      tdb = await createTestDb(dialect);
      tmp = mkdtempSync(join(tmpdir(), 'rolodex-file-data-'));
      file = join(tmp, 'data');
      writeFileSync(file, 'not a directory\n');
      writeFileSync(join(tmp, 'data.ndjson'), '{"object": "account", "externalId": "a1", "fields": {"$name": "Acme"}}\n');
    });
    after(async () => {
      rmSync(tmp, { recursive: true, force: true });
      await tdb.drop();
    });
    // On PostgreSQL the database is one that works: only DATA_DIR is wrong.
    const envFor = (dataDir: string): Record<string, string> => ({ DATA_DIR: dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) });
    const cases = () =>
      [
        [file, ''],
        [join(file, 'below'), ` (${file} in its path is not one)`],
      ] as const;
    const untouched = (what: string) => {
      assert.deepEqual(readdirSync(tmp).sort(), ['data', 'data.ndjson'], `${what}: nothing written beside it`);
      assert.equal(readFileSync(file, 'utf8'), 'not a directory\n', `${what}: the file left as it was`);
    };

    test('every command refuses it with one line, exit 1, and writes nothing', async () => {
      for (const [dataDir, why] of cases())
        for (const args of commands(tmp)) {
          const what = `${args.slice(0, 2).join(' ')} (${dataDir})`;
          const r = await run(envFor(dataDir), args);
          assert.equal(r.code, 1, `${what}: ${r.out}`);
          assert.deepEqual(r.err, [`rolodex ${args[0]}: DATA_DIR ${dataDir} is not a directory${why}: set DATA_DIR to a directory`], what);
          assert.equal(r.out, '', what);
          untouched(what);
        }
    });

    test('the server refuses it at start with one line, exit 1, and writes nothing', () => {
      for (const [dataDir, why] of cases()) {
        const r = rolodexCli({ ...envFor(dataDir), PORT: '0', LOG_LEVEL: 'info' }, 'serve');
        assert.equal(r.code, 1, r.stdout + r.stderr);
        assert.equal(r.stderr, `rolodex serve: DATA_DIR ${dataDir} is not a directory${why}: set DATA_DIR to a directory\n`);
        assert.equal(r.stdout, '');
        untouched(`serve (${dataDir})`);
      }
    });
  });
}
