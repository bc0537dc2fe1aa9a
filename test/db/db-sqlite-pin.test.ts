// The read-slot pin (src/db/sqlite/pin.ts) keeps a read transaction open so that other reads of the
// process skip their lock calls. It must change nothing that reads see, and must not hold
// checkpoints back for longer than its refresh period, nor keep the WAL file from being reused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { openDb } from '../../src/db/database.ts';
import type { Db, Executor } from '../../src/db/types.ts';
import { migrate } from '../../src/db/migrate.ts';
import { prepared } from '../../src/db/prepared.ts';
import { WAL_LIMIT } from '../../src/db/sqlite/pin.ts';
import { write } from '../../src/db/write.ts';

const names = prepared((db: Executor, like: string) => db.selectFrom('workspaces').select('name').where('name', 'like', like).orderBy('name'));
const read = async (db: Db, like: string) => (await names(db.kysely, like)).map((r) => r.name);

let dir: string;
let file: string;
let db: Db;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rolodex-pin-'));
  file = join(dir, 'rolodex.db');
  db = openDb({ dataDir: dir, sqliteFile: file });
  await migrate(db);
});
after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (conn: DatabaseSync, name: string) =>
  conn.prepare('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)').run(`ws_${name}`, name, new Date().toISOString());

test('a read sees every commit made before it, by this process or another connection, at once', async () => {
  assert.deepEqual(await read(db, 'pin-%'), []); // opens the reader and its pin
  // Another process's writes, as far as SQLite can tell: a connection of its own on the same file.
  const other = new DatabaseSync(file, { timeout: 5000 });
  try {
    for (let i = 0; i < 20; i++) {
      insert(other, `pin-other-${String(i).padStart(2, '0')}`);
      const seen = await read(db, 'pin-other-%');
      assert.equal(seen.length, i + 1, `commit ${i} is visible to the next read`);
    }
    await db.kysely.insertInto('workspaces').values({ id: 'ws_pin_own', name: 'pin-own', created_at: new Date().toISOString() }).execute();
    assert.deepEqual(await read(db, 'pin-own'), ['pin-own']);
  } finally {
    other.close();
  }
});

test('checkpoints catch up with the last commit within the pin refresh period', async () => {
  await read(db, 'x'); // the pin is open
  const writer = new DatabaseSync(file, { timeout: 5000 });
  try {
    for (let i = 0; i < 50; i++) insert(writer, `pin-ckpt-${i}`);
    // The pin still holds an older slot: a checkpoint now may stop short of the end of the WAL.
    await new Promise((r) => setTimeout(r, 200));
    const result = writer.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as { busy: number; log: number; checkpointed: number };
    assert.equal(result.busy, 0);
    assert.ok(result.log > 0, 'the WAL held frames to checkpoint');
    assert.equal(result.checkpointed, result.log, 'every frame was checkpointed');
  } finally {
    writer.close();
  }
});

test('under steady writes the WAL is reused: its file stays near the auto-checkpoint size', async () => {
  await read(db, 'x'); // the pin is open
  const name = 'w'.repeat(2000);
  // About 20 MB of WAL frames in 200 commits, with the pin refreshed many times meanwhile.
  for (let i = 0; i < 200; i++) {
    await write(db.kysely, async (tx) => {
      const rows = Array.from({ length: 25 }, (_, j) => ({ id: `ws_steady_${i}_${j}`, name: `${name}${i}-${j}`, created_at: new Date().toISOString() }));
      await tx.insertInto('workspaces').values(rows).execute();
    });
    await read(db, 'x');
    await new Promise((r) => setTimeout(r, 2));
  }
  const size = statSync(`${file}-wal`).size;
  assert.ok(size <= 2 * WAL_LIMIT, `WAL file of ${size} bytes`);
});
