// WAL checkpoints run on a thread of their own in a process that serves reads
// (src/db/sqlite-checkpoint.ts): a commit no longer copies the WAL into the database file on the
// event loop, yet the WAL is still copied, without waiting for the automatic threshold.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../src/db/database.ts';
import type { Db, Executor } from '../src/db/types.ts';
import { migrate } from '../src/db/migrate.ts';
import { prepared } from '../src/db/prepared.ts';

const names = prepared((db: Executor, like: string) => db.selectFrom('workspaces').select('name').where('name', 'like', like));

let dir: string;
let file: string;
let db: Db;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rolodex-checkpoint-'));
  file = join(dir, 'rolodex.db');
  db = openDb({ dataDir: dir, sqliteFile: file });
  await migrate(db);
});
after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a write below the automatic threshold reaches the database file through the checkpoint thread', async () => {
  await names(db.kysely, '%'); // serving reads starts the thread
  await sql`create table ballast (x text)`.execute(db.kysely);
  const before = statSync(file).size;
  // About 500 pages of 4 KiB: half SQLite's automatic threshold (1,000), which would leave them in the WAL.
  await db.kysely.transaction().execute(async (tx) => {
    for (let i = 0; i < 500; i++) await sql`insert into ballast (x) values (${'x'.repeat(4000)})`.execute(tx);
  });
  const mode = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely);
  assert.equal(Number(mode.rows[0]?.wal_autocheckpoint), 0, 'the writing connection does not checkpoint');
  for (let i = 0; i < 300 && statSync(file).size < before + 1_000_000; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(statSync(file).size >= before + 1_000_000, `database file ${statSync(file).size} bytes, was ${before}`);
});
