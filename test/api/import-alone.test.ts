// `rolodex import` with the database alone (docs/import.md §Speed, The database alone): on SQLite,
// when no other connection has the file open, the import writes through a rollback journal and
// gives the file back in WAL mode; with another connection open it writes through the WAL. Either
// way it is all or nothing: a failed import, and an import killed after its pages reached the
// database file, leave the data as it was and the file sound.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { openDb } from '../../src/db/database.ts';
import { definitionsVersion } from '../../src/definitions/repository.ts';
import { systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const contact = (i: number, account = 'a0') => ({
  object: 'contact',
  externalId: `c${i}`,
  fields: {
    $name: { value: { firstName: 'Ann', lastName: `Lee${i}` }, valueType: 'FULL_NAME' },
    $email: { value: [`ann.${i}@acme.test`, `lee.${i}@globex.test`], valueType: 'EMAIL' },
  },
  relationships: { $account: { values: [account] } },
});
const ndjson = (objects: unknown[]) => objects.map((o) => JSON.stringify(o)).join('\n');
const FILE = (n: number, account = 'a0') =>
  ndjson([
    { object: 'account', externalId: 'a0', fields: { $name: { value: 'Acme', valueType: 'TEXT' } } },
    ...Array.from({ length: n }, (_, i) => contact(i, account)),
  ]);

/**
 * A migrated database with one workspace and nothing else connected to it (SQLite: the test's own
 * connection closed); `drop` removes it.
 */
async function freshDatabase(
  dialect: 'sqlite' | 'postgres',
): Promise<{ tdb: TestDb; workspaceId: string; env: Record<string, string>; drop: () => Promise<void> }> {
  const tdb = await createTestDb(dialect);
  const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Import alone' });
  if (dialect === 'sqlite') await tdb.db.close();
  return {
    tdb,
    workspaceId: ws.id,
    env: { DATA_DIR: tdb.dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) },
    drop: async () => (dialect === 'sqlite' ? rmSync(tdb.dataDir, { recursive: true, force: true }) : tdb.drop()),
  };
}

async function rolodexImport(
  env: Record<string, string>,
  workspaceId: string,
  text: string,
): Promise<{ code: number; out: Record<string, unknown>; err: string }> {
  const file = join(env.DATA_DIR as string, 'import.ndjson');
  writeFileSync(file, text);
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), env, isTty: false };
  const code = await main(['import', '--workspace', workspaceId, file, '--json'], io);
  return { code, out: code === 0 ? (JSON.parse(out.join('')) as Record<string, unknown>) : {}, err: err.join('') };
}

/** What the file holds, read on a connection of its own once nothing else has it open. */
function inspect(file: string): { journal: string; integrity: string; contacts: number } {
  const db = new DatabaseSync(file);
  try {
    const one = <T>(q: string) => Object.values(db.prepare(q).get() as object)[0] as T;
    return {
      journal: one<string>('pragma journal_mode'),
      integrity: one<string>('pragma integrity_check'),
      contacts: Number(one<number>(`select count(*) from records where kind = 'contact'`)),
    };
  } finally {
    db.close();
  }
}

/**
 * The import of test/helpers/import-child.ts, whose small cache spills pages into the file long
 * before the commit; with `kill`, killed once the file has grown past its size before the import:
 * the import's own rows, with the old pages they replaced saved in the journal.
 */
async function importInChild(tdb: TestDb, workspaceId: string, text: string, kill: boolean) {
  const file = tdb.sqliteFile as string;
  const input = join(tdb.dataDir, 'import.ndjson');
  writeFileSync(input, text);
  const size = statSync(file).size;
  // A killed import cannot remove its spill files and id store: they go under the data
  // directory, which the test's `drop` removes.
  const tmp = join(tdb.dataDir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const env = { ...process.env, TMPDIR: tmp };
  const child = spawn(process.execPath, ['test/helpers/import-child.ts', tdb.dataDir, workspaceId, input], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let said = '';
  let err = '';
  child.stdout.on('data', (d) => (said += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = once(child, 'exit');
  let grew = false;
  while (child.exitCode === null && child.signalCode === null) {
    grew ||= statSync(file).size > size;
    if (grew && kill) child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 5));
  }
  const [code, signal] = (await exited) as [number | null, string | null];
  assert.equal(said.trim(), 'rollback', 'the child had the database alone');
  return { code, signal, grew, err };
}

for (const dialect of testDialects()) {
  describe(`rolodex import and the database alone [${dialect}]`, () => {
    test('an import nothing else is connected to writes through a rollback journal (SQLite) and leaves the file in WAL mode', async () => {
      const { tdb, workspaceId, env, drop } = await freshDatabase(dialect);
      try {
        const r = await rolodexImport(env, workspaceId, FILE(30));
        assert.equal(r.code, 0, r.err);
        assert.deepEqual(r.out.counts, { account: 1, contact: 30 });
        if (dialect === 'postgres') {
          assert.equal('journal' in r.out, false, 'PostgreSQL has no journal to report');
          return;
        }
        assert.equal(r.out.journal, 'rollback');
        assert.deepEqual(inspect(tdb.sqliteFile as string), { journal: 'wal', integrity: 'ok', contacts: 30 });
        assert.equal(existsSync(`${tdb.sqliteFile}-journal`), false);
      } finally {
        await drop();
      }
    });

    if (dialect !== 'sqlite') return;

    test('with another connection open (a running server, say) it writes through the WAL, and that connection keeps reading', async () => {
      const { tdb, workspaceId, env, drop } = await freshDatabase(dialect);
      const other = new DatabaseSync(tdb.sqliteFile as string, { timeout: 5000 });
      try {
        other.prepare('select count(*) from workspaces').get();
        const r = await rolodexImport(env, workspaceId, FILE(30));
        assert.equal(r.code, 0, r.err);
        assert.equal(r.out.journal, 'wal');
        assert.deepEqual({ ...other.prepare(`select count(*) as n from records where kind = 'contact'`).get() }, { n: 30 });
        assert.equal((other.prepare('pragma journal_mode').get() as { journal_mode: string }).journal_mode, 'wal');
      } finally {
        other.close();
        await drop();
      }
    });

    test('a failed import alone writes nothing, even after its pages spilled into the file, and gives the file back in WAL mode', async () => {
      const { tdb, workspaceId, env, drop } = await freshDatabase(dialect);
      try {
        assert.equal((await rolodexImport(env, workspaceId, FILE(20))).code, 0);
        const before = inspect(tdb.sqliteFile as string);
        const size = statSync(tdb.sqliteFile as string).size;
        // Refused only in the transaction, once every contact is written: a relationship no definition names.
        const bad = { object: 'contact', externalId: 'bad', relationships: { nope: { values: ['a0'] } } };
        const r = await importInChild(tdb, workspaceId, `${FILE(20_000)}\n${JSON.stringify(bad)}`, false);
        assert.equal(r.code, 1);
        assert.match(r.err, /line 20002: relationships\.nope: is not a relationship of contact/);
        assert.ok(r.grew, 'the import wrote pages into the file before it failed');
        assert.deepEqual(inspect(tdb.sqliteFile as string), before);
        assert.equal(statSync(tdb.sqliteFile as string).size, size);
        assert.equal(existsSync(`${tdb.sqliteFile}-journal`), false);
      } finally {
        await drop();
      }
    });

    test('an import killed after its pages reached the database file is rolled back by the next process that opens it', async (t) => {
      const { tdb, workspaceId, drop } = await freshDatabase(dialect);
      t.after(drop);
      const file = tdb.sqliteFile as string;
      const size = statSync(file).size;
      const r = await importInChild(tdb, workspaceId, FILE(20_000), true);
      assert.equal(r.signal, 'SIGKILL', 'the import ended before it could be killed');
      assert.ok(existsSync(`${file}-journal`), 'the killed import left its journal');
      // The server's way in, its first read on the fast reader: the writing connection is opened
      // first, which puts the old pages back and sets WAL (src/db/sqlite/cached.ts).
      const db = openDb({ dataDir: tdb.dataDir });
      try {
        assert.equal(await definitionsVersion(db.kysely, workspaceId), 0);
        assert.equal(Number((await sql<{ n: number }>`select count(*) as n from records`.execute(db.kysely)).rows[0]?.n), 0);
        assert.equal((await sql<{ name: string }>`select name from workspaces`.execute(db.kysely)).rows[0]?.name, 'Import alone');
      } finally {
        await db.close();
      }
      assert.deepEqual(inspect(file), { journal: 'wal', integrity: 'ok', contacts: 0 });
      assert.equal(statSync(file).size, size, 'the rollback cut the file back to its size before the import');
    });
  });
}
