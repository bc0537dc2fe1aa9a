// A serving process's WAL checkpoints run on a thread of their own (src/db/sqlite/checkpoint.ts,
// docs/architecture.md §SQLite checkpoints): its COMMITs copy nothing into the database file,
// the thread does, and truncates the WAL once all of it is copied, so that the WAL stays small
// under steady writes; closing waits for the thread. SQLite only.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/db/database.ts';
import type { Db } from '../../src/db/types.ts';
import { write } from '../../src/db/write.ts';

async function withDb(serving: boolean, fn: (db: Db, file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-checkpoint-'));
  const file = join(dir, 'rolodex.db');
  const db = openDb({ dataDir: dir, sqliteFile: file, serving });
  try {
    await sql`create table t (k integer primary key, v text)`.execute(db.kysely);
    await fn(db, file);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const walSize = (file: string) => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;

/** Writes `n` transactions of one 4 KiB row each, a turn of the event loop apart. */
async function writeRows(db: Db, from: number, n: number): Promise<void> {
  for (let k = from; k < from + n; k++) {
    await write(db.kysely, (tx) => sql`insert into t (k, v) values (${k}, ${'x'.repeat(4096)})`.execute(tx));
    await new Promise((r) => setImmediate(r));
  }
}

test("a serving process's COMMITs leave the WAL's pages to the thread, which copies them into the database", async () => {
  await withDb(true, async (db, file) => {
    await writeRows(db, 0, 50);
    // The writing connection checkpoints nothing itself.
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely);
    assert.equal(rows[0]!.wal_autocheckpoint, 0);
    // The thread has copied the pages into the database file: a copy of that file alone, without
    // the WAL, holds every row.
    const copy = `${file}.alone`;
    const deadline = Date.now() + 5000;
    for (;;) {
      copyFileSync(file, copy);
      const alone = new DatabaseSync(copy);
      // Until the thread's first checkpoint, the file does not hold the table either.
      const { n } = (alone.prepare("select count(*) as n from sqlite_master where name = 't'").get() as { n: number }).n
        ? (alone.prepare('select count(*) as n from t').get() as { n: number })
        : { n: 0 };
      alone.close();
      if (n === 50) break;
      assert.ok(Date.now() < deadline, `the database file holds ${n} of 50 rows`);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});

test('under steady writes the WAL stays small: the thread truncates it once all of it is copied', async () => {
  await withDb(true, async (db, file) => {
    // 6,000 transactions of a 4 KiB row: some 75 MB through the WAL, were it never started again.
    let largest = 0;
    for (let i = 0; i < 60; i++) {
      await writeRows(db, i * 100, 100);
      largest = Math.max(largest, walSize(file));
    }
    assert.ok(largest < 24 * 1024 * 1024, `the WAL grew to ${largest} bytes`);
  });
});

test('closing waits for the thread to close its connection, and the database opens again with every row', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-checkpoint-'));
  const file = join(dir, 'rolodex.db');
  try {
    const db = openDb({ dataDir: dir, sqliteFile: file, serving: true });
    await sql`create table t (k integer primary key, v text)`.execute(db.kysely);
    await writeRows(db, 0, 20);
    await db.close();
    // The last connection to close checkpoints the WAL and removes it; had the thread's connection
    // stayed open, the file would still be there.
    assert.equal(existsSync(`${file}-wal`), false);
    const again = new DatabaseSync(file);
    assert.equal((again.prepare('select count(*) as n from t').get() as { n: number }).n, 20);
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
