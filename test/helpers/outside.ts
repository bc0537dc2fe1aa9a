// What another process does to a test app's database: the CLI on a handle of its own, or one
// statement on a connection of its own. Such changes bypass the app's caches, as an operator's or
// another instance's would.
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { TestApp } from './app.ts';

/** Runs the `rolodex` CLI in process against the app's database; it must succeed. */
export async function rolodex(t: TestApp, ...args: string[]): Promise<void> {
  const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
  const err: string[] = [];
  const io: Io = { out: () => undefined, err: (s) => err.push(s), env, isTty: false };
  assert.equal(await main(args, io), 0, err.join(''));
}

/** Runs `statement` on a connection of its own, as another process would. */
export async function elsewhere(t: TestApp, statement: string): Promise<void> {
  if (t.tdb.sqliteFile) {
    const db = new DatabaseSync(t.tdb.sqliteFile, { timeout: 5000 });
    db.exec(statement);
    db.close();
    return;
  }
  const c = new pg.Client({ connectionString: t.tdb.databaseUrl });
  await c.connect();
  await c.query(statement);
  await c.end();
}
