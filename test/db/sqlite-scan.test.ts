// Scans on SQLite run on a thread of their own (src/db/sqlite/scan.ts, docs/design.md §Database):
// a statement sent while one runs is answered first, a scan's error reaches its caller, and inside
// a transaction a scan reads what the transaction wrote.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { scan } from '../../src/db/scan.ts';
import { write } from '../../src/db/write.ts';

async function withDb(fn: (db: ReturnType<typeof openDb>) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-scan-'));
  const db = openDb({ dataDir });
  try {
    await migrate(db);
    await fn(db);
  } finally {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// A read that goes through millions of rows.
const long = sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000000) select count(*) as n from c`;

test('a statement sent while a scan runs is answered before the scan', async () => {
  await withDb(async (db) => {
    const order: string[] = [];
    const scanned = scan(db.kysely, long).then((rows) => {
      order.push('scan');
      return rows;
    });
    const point = sql<{ n: number }>`select 1 as n`.execute(db.kysely).then(() => order.push('point read'));
    await Promise.all([scanned, point]);
    assert.deepEqual(order, ['point read', 'scan']);
    assert.deepEqual(await scanned, [{ n: 3000000 }]);
  });
});

test("a scan's error reaches its caller, and the next scan runs", async () => {
  await withDb(async (db) => {
    await assert.rejects(scan(db.kysely, sql`select * from no_such_table`), /no such table/);
    assert.deepEqual(await scan(db.kysely, sql<{ n: number }>`select 2 as n`), [{ n: 2 }]);
  });
});

test('inside a transaction a scan reads what the transaction wrote', async () => {
  await withDb(async (db) => {
    await write(db.kysely, async (tx) => {
      await sql`insert into workspaces (id, name, created_at) values ('ws_scan', 'Scan', '2026-01-01T00:00:00.000Z')`.execute(tx);
      const rows = await scan(tx, sql<{ n: number }>`select count(*) as n from workspaces where id = 'ws_scan'`);
      assert.deepEqual(
        rows.map((r) => ({ ...r })),
        [{ n: 1 }],
      );
      throw new Error('rolled back');
    }).catch((err: Error) => assert.equal(err.message, 'rolled back'));
  });
});
