// What creates the database (docs/cli.md §What creates the database): given a DATA_DIR without
// one (a mistyped DATA_DIR), a command that works on what a database holds or only reads it is
// refused with one line naming where it looked, exit code 1, and creates nothing; before, it made
// the directory and an empty migrated database there and answered as if the workspace were empty
// (`rolodex workspace list`: "no workspaces", exit 0). Only `serve`, `migrate`, `workspace create`
// and `demo` create it (and `restore` puts one in place). On PostgreSQL DATA_DIR holds no
// database, and a command that writes nothing there makes no directory either; the same rule
// holds for the schema DATABASE_URL names: a mistyped one was created and migrated by any
// command, which then answered "no workspaces", exit 0. On SQLite, so was a `rolodex.db` that holds
// no migrations (a `touch`ed file): it is refused too, read without a byte of it changed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { rolodexWith } from '../helpers/cli.ts';
import { createTestDb, type TestDb, testDialects, withSearchPath } from '../helpers/db.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';

const run = rolodexWith;

/** Runs `sql` on the test server, outside any schema a test uses. */
async function admin<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  try {
    return (await c.query<R>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** Makes `file` a SQLite database of another program: `sql` run on it, nothing of rolodex. */
function sqlite(file: string, sql: string): void {
  const db = new DatabaseSync(file);
  db.exec(sql);
  db.close();
}

const schemaExists = async (schema: string) => (await admin('select 1 from pg_namespace where nspname = $1', [schema])).length > 0;

/** The test server as refusals name it: host, port and database. */
const at = (() => {
  const u = new URL(TEST_DATABASE_URL);
  return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
})();

// Every command that works on what a database holds or only reads it.
function readers(tmp: string): string[][] {
  const lines = join(tmp, 'data.ndjson');
  writeFileSync(lines, '{"object": "account", "externalId": "a1", "fields": {"$name": "Acme"}}\n');
  return [
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
}

for (const dialect of testDialects()) {
  describe(`a DATA_DIR without a database [${dialect}]`, () => {
    let tdb: TestDb;
    let tmp: string;
    // Schemas the tests name that do not exist before them, dropped after.
    const schemas: string[] = [];
    const newSchema = () => {
      const name = `typo_${randomBytes(6).toString('hex')}`;
      schemas.push(name);
      return name;
    };
    before(async () => {
      tdb = await createTestDb(dialect);
      tmp = mkdtempSync(join(tmpdir(), 'rolodex-typo-'));
    });
    after(async () => {
      rmSync(tmp, { recursive: true, force: true });
      await tdb.drop();
      for (const schema of schemas) await admin(`drop schema if exists ${schema} cascade`);
    });
    const envFor = (dataDir: string, databaseUrl = tdb.databaseUrl): Record<string, string> => ({
      DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });

    test('a command that needs what a database holds is one line and exit 1, and creates nothing', async () => {
      // On PostgreSQL the schema is mistyped too: neither is created.
      const schema = dialect === 'postgres' ? newSchema() : undefined;
      for (const args of readers(tmp)) {
        const typo = join(tmp, 'nope', 'data');
        const r = await run(envFor(typo, schema && withSearchPath(TEST_DATABASE_URL, schema)), args);
        const what = args.slice(0, 2).join(' ');
        if (dialect === 'sqlite') {
          assert.equal(r.code, 1, `${what}: ${r.out}`);
          assert.deepEqual(r.err, [`rolodex ${args[0]}: no database at ${typo}/rolodex.db: is DATA_DIR right? (\`rolodex migrate\` creates one)`], what);
        } else if (args[0] !== 'backup') {
          // A backup of PostgreSQL reads no database: it says how to pg_dump it.
          assert.equal(r.code, 1, `${what}: ${r.out}`);
          assert.deepEqual(
            r.err,
            [`rolodex ${args[0]}: no schema "${schema}" in the PostgreSQL database at ${at}: is DATABASE_URL right? (\`rolodex migrate\` creates it)`],
            what,
          );
          assert.equal(await schemaExists(schema!), false, `${what}: no schema made`);
        }
        assert.equal(existsSync(join(tmp, 'nope')), false, `${what}: no DATA_DIR made`);
        assert.equal(existsSync(join(tmp, 'out.ndjson')), false, `${what}: no export file`);
        // On PostgreSQL a backup writes its directory (how to pg_dump the database), as it should.
        if (dialect === 'sqlite') assert.equal(existsSync(join(tmp, 'backup')), false, `${what}: no backup directory`);
        rmSync(join(tmp, 'backup'), { recursive: true, force: true });
      }
    });

    if (dialect === 'postgres')
      test('a schema that exists but holds no migrations is refused the same way, and left empty', async () => {
        const empty = await createTestDb('postgres', { migrate: false });
        try {
          for (const args of readers(tmp).filter((a) => a[0] !== 'backup')) {
            const r = await run(envFor(tdb.dataDir, empty.databaseUrl), args);
            const what = args.slice(0, 2).join(' ');
            assert.equal(r.code, 1, `${what}: ${r.out}`);
            assert.deepEqual(
              r.err,
              [
                `rolodex ${args[0]}: no rolodex database in schema "${empty.schema}" of the PostgreSQL database at ${at}: is DATABASE_URL right? (\`rolodex migrate\` creates one)`,
              ],
              what,
            );
          }
          const tables = await admin('select tablename from pg_tables where schemaname = $1', [empty.schema]);
          assert.deepEqual(tables, [], 'nothing migrated into it');
        } finally {
          await empty.drop();
        }
      });

    if (dialect === 'sqlite')
      test('a rolodex.db that holds no migrations is refused the same way, and left as it was', async () => {
        // A `touch`ed file, a SQLite database with no tables, another program's database.
        const forms: Record<string, (file: string) => void> = {
          touched: (file) => writeFileSync(file, ''),
          'no tables': (file) => sqlite(file, 'PRAGMA user_version = 7'),
          "another program's": (file) => sqlite(file, 'CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (1)'),
        };
        for (const [form, make] of Object.entries(forms)) {
          const dataDir = join(tmp, `empty-${form.replace(/\W/g, '')}`);
          mkdirSync(dataDir);
          const file = join(dataDir, 'rolodex.db');
          make(file);
          const bytes = readFileSync(file);
          for (const args of readers(tmp)) {
            const r = await run(envFor(dataDir), args);
            const what = `${form}: ${args.slice(0, 2).join(' ')}`;
            assert.equal(r.code, 1, `${what}: ${r.out}`);
            assert.deepEqual(r.err, [`rolodex ${args[0]}: no rolodex database in ${file}: is DATA_DIR right? (\`rolodex migrate\` creates one)`], what);
            assert.deepEqual(readFileSync(file), bytes, `${what}: the file as it was`);
            assert.deepEqual(readdirSync(dataDir), ['rolodex.db'], `${what}: nothing beside it`);
            assert.equal(existsSync(join(tmp, 'out.ndjson')), false, `${what}: no export file`);
            assert.equal(existsSync(join(tmp, 'backup')), false, `${what}: no backup directory`);
          }
          // `migrate` makes it a database the commands work on.
          assert.equal((await run(envFor(dataDir), ['migrate'])).code, 0, form);
          const list = await run(envFor(dataDir), ['workspace', 'list']);
          assert.equal(list.code, 0, `${form}: ${list.err.join('\n')}`);
          assert.equal(list.out, 'no workspaces', form);
        }
      });

    if (dialect === 'sqlite')
      test('one with a hot journal, which a read-only look cannot read, is refused once put back', async () => {
        const dataDir = join(tmp, 'hot-journal');
        mkdirSync(dataDir);
        const file = join(dataDir, 'rolodex.db');
        // Another program killed in a transaction that spilled to the file: its journal is hot.
        const killed = spawnSync(process.execPath, [
          '-e',
          `const d = new (require('node:sqlite').DatabaseSync)(${JSON.stringify(file)});
           d.exec('PRAGMA journal_mode = DELETE; PRAGMA cache_size = 10; CREATE TABLE notes (body TEXT); BEGIN');
           const s = d.prepare('INSERT INTO notes VALUES (?)');
           for (let i = 0; i < 20000; i++) s.run('x'.repeat(100) + i);
           process.kill(process.pid, 'SIGKILL');`,
        ]);
        assert.equal(killed.signal, 'SIGKILL');
        assert.equal(existsSync(`${file}-journal`), true, 'a journal left behind');
        const r = await run(envFor(dataDir), ['workspace', 'list']);
        assert.equal(r.code, 1, r.out);
        assert.deepEqual(r.err, [`rolodex workspace: no rolodex database in ${file}: is DATA_DIR right? (\`rolodex migrate\` creates one)`]);
        const db = new DatabaseSync(file, { readOnly: true });
        try {
          const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
          assert.deepEqual(
            tables.map((t) => t.name),
            ['notes'],
            'nothing migrated into it',
          );
          assert.equal(db.prepare('SELECT count(*) AS n FROM notes').get()?.n, 0, 'rolled back');
        } finally {
          db.close();
        }
      });

    test('`migrate` and `workspace create` create it, and the commands then work on it', async () => {
      for (const first of [['migrate'], ['workspace', 'create', '--name', 'Acme']]) {
        const dataDir = join(tmp, `new-${first[0]}`, 'data');
        // On PostgreSQL, a schema that does not exist yet: the command creates and migrates it.
        const schema = dialect === 'postgres' ? newSchema() : undefined;
        const env = envFor(dataDir, schema && withSearchPath(TEST_DATABASE_URL, schema));
        const made = await run(env, first);
        assert.equal(made.code, 0, made.err.join('\n'));
        if (dialect === 'sqlite') assert.equal(existsSync(join(dataDir, 'rolodex.db')), true, first.join(' '));
        else assert.equal(await schemaExists(schema!), true, first.join(' '));
        const list = await run(env, ['workspace', 'list']);
        assert.equal(list.code, 0, list.err.join('\n'));
        assert.match(list.out, first[0] === 'migrate' ? /^no workspaces$/ : /^ws_\w+ {2}Acme$/);
      }
    });

    if (dialect === 'postgres')
      test('a schema named by the URL’s own `search_path` parameter is created and used as one named in `options`', async () => {
        const schema = newSchema();
        const url = new URL(TEST_DATABASE_URL);
        url.searchParams.set('search_path', schema);
        const env = envFor(join(tmp, 'search-path-param', 'data'), url.toString());
        const made = await run(env, ['workspace', 'create', '--name', 'Acme']);
        assert.equal(made.code, 0, made.err.join('\n'));
        assert.equal(await schemaExists(schema), true);
        const list = await run(env, ['workspace', 'list']);
        assert.match(list.out, /^ws_\w+ {2}Acme$/);
      });

    // The names of the workspaces `workspace list` printed, in order of name.
    const listed = (out: string) =>
      out
        .split('\n')
        .map((l) => /^ws_\w+ {2}(.+)$/.exec(l)?.[1] ?? l)
        .sort();

    // The name's two forms name one schema: the first form creates and migrates it, and the second
    // works on the one the first created (a schema of its own would be a second, empty one).
    if (dialect === 'postgres')
      test('a schema named in capitals is the one PostgreSQL reads, in lower case, in either form of the URL', async () => {
        const schema = newSchema();
        const written = schema.replace('typo', 'Typo');
        try {
          for (const [form, name] of [
            ['search_path', 'Acme'],
            ['options', 'Beta'],
          ] as const) {
            const url = new URL(TEST_DATABASE_URL);
            url.searchParams.set(form, form === 'options' ? `-c search_path=${written}` : written);
            const env = envFor(join(tmp, `capitals-${form}`, 'data'), url.toString());
            const made = await run(env, ['workspace', 'create', '--name', name]);
            assert.equal(made.code, 0, `${form}: ${made.err.join('\n')}`);
            assert.equal(await schemaExists(schema), true, form);
            assert.equal(await schemaExists(written), false, `${form}: no schema "${written}" beside it`);
            const list = await run(env, ['workspace', 'list']);
            assert.deepEqual(listed(list.out), name === 'Acme' ? ['Acme'] : ['Acme', 'Beta'], form);
          }
        } finally {
          await admin(`drop schema if exists "${written}" cascade`);
        }
      });

    if (dialect === 'postgres')
      test('a schema named in quotes is the one PostgreSQL reads, as written, in either form of the URL', async () => {
        const schema = newSchema().replace('typo', 'Typo');
        try {
          for (const [form, name] of [
            ['search_path', 'Acme'],
            ['options', 'Beta'],
          ] as const) {
            const url = new URL(TEST_DATABASE_URL);
            url.searchParams.set(form, form === 'options' ? `-c search_path="${schema}"` : `"${schema}"`);
            const env = envFor(join(tmp, `quoted-${form}`, 'data'), url.toString());
            const made = await run(env, ['workspace', 'create', '--name', name]);
            assert.equal(made.code, 0, `${form}: ${made.err.join('\n')}`);
            assert.equal(await schemaExists(schema), true, form);
            const list = await run(env, ['workspace', 'list']);
            assert.deepEqual(listed(list.out), name === 'Acme' ? ['Acme'] : ['Acme', 'Beta'], form);
          }
        } finally {
          await admin(`drop schema if exists "${schema}" cascade`);
        }
      });

    if (dialect === 'postgres')
      test('"$user" first in the path names no schema of its own: the schema in use is the one it leaves', async () => {
        // PostgreSQL's own default path, `"$user", public`, written in the URL: `$user` stands for
        // the session user's schema where there is one (the test server has none), in quotes or not.
        const schema = newSchema();
        await admin(`create schema ${schema}`);
        for (const [i, first] of ['"$user"', '$user'].entries()) {
          const url = new URL(TEST_DATABASE_URL);
          url.searchParams.set('search_path', `${first}, ${schema}`);
          const env = envFor(join(tmp, `user-first-${i}`, 'data'), url.toString());
          try {
            const made = await run(env, ['workspace', 'create', '--name', `Acme ${i}`]);
            assert.equal(made.code, 0, `${first}: ${made.err.join('\n')}`);
            assert.equal(await schemaExists('$user'), false, `${first}: no schema "$user"`);
            const rows = await admin<{ n: string }>(`select count(*) as n from ${schema}.workspaces where name = $1`, [`Acme ${i}`]);
            assert.equal(Number(rows[0]?.n), 1, first);
            const backup = await run(env, ['backup', join(tmp, `user-first-${i}`, 'backup')]);
            assert.equal(backup.code, 0, backup.err.join('\n'));
            assert.ok(!backup.out.includes('--schema='), `${first}: the dump names no schema "$user"`);
          } finally {
            await admin('drop schema if exists "$user" cascade');
          }
        }
      });
  });
}
