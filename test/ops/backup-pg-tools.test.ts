// The pg_dump and pg_restore lines that `rolodex backup` and `rolodex restore` print on PostgreSQL
// (docs/deploy.md §Backups) run as printed, with DATABASE_URL naming its schema in either form
// the server takes: `?search_path=NAME` (which libpq, under pg_dump, refuses as a URL parameter),
// with another parameter after it, or `options=-c%20search_path%3DNAME`, its `=` encoded or not
// (libpq refuses one unencoded), and a name in quotes or holding a `$` (printed quoted, for
// pg_dump and the shell). The dump holds the schema, and restored into it after a drop, it holds
// the workspace again. The URL they connect with is DATABASE_URL without its search_path
// parameter, the rest as written (a password's `&` too).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { main } from '../../src/cli/main.ts';
import type { Io } from '../../src/cli/io.ts';
import { systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, testDialects } from '../helpers/db.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';

const hasPgDump = spawnSync('pg_dump', ['--version']).status === 0;
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs `rolodex COMMAND DIR` and returns the printed line that starts with `tool`. */
async function printed(command: 'backup' | 'restore', dir: string, env: Record<string, string>, tool: string): Promise<string> {
  let out = '';
  let err = '';
  const io: Io = { out: (t) => void (out += t + '\n'), err: (t) => void (err += t + '\n'), env, isTty: false };
  assert.equal(await main([command, dir], io), 0, err);
  const line = out.split('\n').find((l) => l.trim().startsWith(tool));
  assert.ok(line, `no ${tool} line in:\n${out}`);
  return line.trim();
}

const shell = (line: string, cwd: string, env: Record<string, string>) =>
  execFileSync('/bin/sh', ['-c', line], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

if (testDialects().includes('postgres'))
  describe('the printed pg_dump and pg_restore lines [postgres]', { skip: !hasPgDump && 'pg_dump is not installed' }, () => {
    const forms: [string, (schema: string) => string][] = [
      ['?search_path=NAME', (s) => `${TEST_DATABASE_URL}?search_path=${s}`],
      ['?search_path=NAME&application_name=…', (s) => `${TEST_DATABASE_URL}?search_path=${s}&application_name=rolodex-test`],
      ['?options=-c%20search_path%3DNAME', (s) => `${TEST_DATABASE_URL}?options=-c%20search_path%3D${s}`],
      // As typed by hand: the server takes it, libpq refuses the `=` inside a value unencoded.
      ['?options=-c search_path=NAME', (s) => `${TEST_DATABASE_URL}?options=-c search_path=${s}`],
    ];
    for (const [form, url] of forms)
      test(`DATABASE_URL with ${form}: they run as printed`, async () => {
        const tdb = await createTestDb('postgres');
        try {
          const schema = tdb.schema as string;
          const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Dumped' });
          await dumpAndRestore(ws.id, schema, url(schema));
        } finally {
          await tdb.drop();
        }
      });

    test('a schema named in double quotes, with capitals: they run as printed', async () => {
      const tdb = await createTestDb('postgres');
      const schema = `${tdb.schema as string}_Up`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Dumped' });
        await admin.query(`alter schema ${tdb.schema as string} rename to "${schema}"`);
        await dumpAndRestore(ws.id, `"${schema}"`, `${TEST_DATABASE_URL}?search_path=%22${schema}%22`);
      } finally {
        await admin.query(`alter schema "${schema}" rename to ${tdb.schema as string}`).catch(() => undefined);
        await admin.end();
        await tdb.drop();
      }
    });

    test('a schema whose name holds a $: they run as printed, the shell expanding nothing', async () => {
      const tdb = await createTestDb('postgres');
      // Unquoted in the URL, as PostgreSQL reads `$` in a name; `$x` unquoted in a shell is a variable.
      const schema = `${tdb.schema as string}_a$x`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Dumped' });
        await admin.query(`alter schema ${tdb.schema as string} rename to "${schema}"`);
        await dumpAndRestore(ws.id, `"${schema}"`, `${TEST_DATABASE_URL}?search_path=${schema}`);
      } finally {
        await admin.query(`alter schema "${schema}" rename to ${tdb.schema as string}`).catch(() => undefined);
        await admin.end();
        await tdb.drop();
      }
    });

    /**
     * Dumps with the printed line, drops the schema (`sqlName`, as SQL names it), restores with the
     * printed line and reads the workspace back.
     */
    async function dumpAndRestore(wsId: string, sqlName: string, databaseUrl: string): Promise<void> {
      const work = mkdtempSync(join(tmpdir(), 'rolodex-pgdump-'));
      dirs.push(work);
      const env = { DATA_DIR: join(work, 'data'), DATABASE_URL: databaseUrl };

      const dump = await printed('backup', join(work, 'backup'), env, 'pg_dump');
      assert.ok(dump.includes(` --schema=${sqlName.startsWith('"') ? `'${sqlName}'` : sqlName} `), dump);
      shell(dump, work, env);
      const file = shell('ls *.pgdump', work, env).trim();
      assert.ok(execFileSync('pg_restore', ['--list', join(work, file)], { encoding: 'utf8' }).includes(`TABLE ${sqlName.replaceAll('"', '')} workspaces`));

      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`drop schema ${sqlName} cascade`);
        const restore = await printed('restore', join(work, 'backup'), { ...env, DATA_DIR: join(work, 'restored') }, 'pg_restore');
        shell(restore.replace('rolodex-YYYY-MM-DD.pgdump', file), work, env);
        const { rows } = await admin.query<{ name: string }>(`select name from ${sqlName}.workspaces where id = $1`, [wsId]);
        assert.deepEqual(rows, [{ name: 'Dumped' }]);
      } finally {
        await admin.end();
      }
    }

    test("the URL they connect with keeps the rest of DATABASE_URL as written, a password's & too", async () => {
      const tdb = await createTestDb('postgres');
      try {
        const schema = tdb.schema as string;
        const work = mkdtempSync(join(tmpdir(), 'rolodex-pgdump-'));
        dirs.push(work);
        // The server trusts the test's connections: a password is taken and not checked.
        const url = new URL(TEST_DATABASE_URL);
        url.password = 'pa&ss';
        const base = url.href;
        for (const [i, [given, meant]] of [
          [`${base}?search_path=${schema}`, base],
          [`${base}?application_name=rolodex-test&search_path=${schema}`, `${base}?application_name=rolodex-test`],
        ].entries()) {
          const env = { DATA_DIR: join(work, `data-${i}`), DATABASE_URL: given! };
          for (const [command, tool] of [
            ['backup', 'pg_dump'],
            ['restore', 'pg_restore'],
          ] as const) {
            const line = await printed(
              command,
              join(work, `backup-${i}`),
              command === 'backup' ? env : { ...env, DATA_DIR: join(work, `restored-${i}`) },
              tool,
            );
            const dbname = /--dbname=("\$\(.*\)")/.exec(line)?.[1];
            assert.ok(dbname, line);
            assert.equal(shell(`printf %s ${dbname}`, work, env), meant, `${command}: ${line}`);
          }
        }
      } finally {
        await tdb.drop();
      }
    });
  });
