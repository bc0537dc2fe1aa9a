// Transactions that wait on each other's locks hold their connections while they wait. They take
// them from their own part of the PostgreSQL pool (src/db/postgres/connection.ts), so reads keep being answered
// while any number of writers queue on one lock; and reads, pipelined, keep to a few connections
// whatever the load (docs/deploy.md §Database connections).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/db/database.ts';
import type { Db } from '../../src/db/types.ts';
import { findList } from '../../src/lists/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';
import { write } from '../../src/db/write.ts';

const POOL = 4;
const WRITERS = 12;

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`database pool [${dialect}]`, () => {
    let t: TestDb;
    let db: Db;
    before(async () => {
      t = await createTestDb(dialect);
      db = openDb({ dataDir: t.dataDir, databaseUrl: TEST_DATABASE_URL, ...(t.schema ? { schema: t.schema } : {}), poolSize: POOL });
    });
    after(async () => {
      await db.close();
      await t.drop();
    });

    test('reads are answered while more transactions than the pool has connections wait on one lock', async () => {
      const lock = sql`select pg_advisory_xact_lock(4242)`;
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let holding!: () => void;
      const taken = new Promise<void>((r) => (holding = r));
      const holder = write(db.kysely, async (tx) => {
        await lock.execute(tx);
        holding();
        await held;
      });
      await taken;
      // Every one of these waits for the holder, inside its transaction.
      const writers = Array.from({ length: WRITERS }, () => write(db.kysely, async (tx) => void (await lock.execute(tx))));
      try {
        await new Promise((r) => setTimeout(r, 200));
        // Reads through Kysely and through the prepared fast path, while the lock is still held.
        const reads = Promise.all([sql`select 1 as one`.execute(db.kysely), findList(db.kysely, 'ws_none', 'lst_none')]);
        // Unref'd: once the reads are answered, the timer does not hold the file's process open.
        const outcome = await Promise.race([reads.then(() => 'answered'), new Promise((r) => setTimeout(() => r('starved'), 5000).unref())]);
        assert.equal(outcome, 'answered', 'reads do not wait for the writers');
        assert.ok((db.pool?.waiting() ?? 0) > 0, 'the writers past the cap wait for a place');
        assert.ok((db.pool?.transactions() ?? 0) <= POOL - 3, 'with a pool of 4, 1 connection is for transactions (1 pipelined, 2 for scans)');
      } finally {
        release();
        await holder;
        await Promise.all(writers);
      }
      assert.equal(db.pool?.transactions(), 0);
      assert.equal(db.pool?.waiting(), 0);
    });

    test('statements outside transactions share 1 connection however many are in flight', async () => {
      const big = openDb({ dataDir: t.dataDir, databaseUrl: TEST_DATABASE_URL, ...(t.schema ? { schema: t.schema } : {}), poolSize: 10 });
      try {
        const backend = sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.01)`;
        // In flight at once, through Kysely and through the prepared fast path next to them.
        const pids = await Promise.all([
          ...Array.from({ length: 40 }, async () => (await backend.execute(big.kysely)).rows[0]!.pid),
          ...Array.from({ length: 10 }, async () => (await findList(big.kysely, 'ws_none', 'lst_none'), 0)),
        ]);
        const distinct = new Set(pids.filter((p) => p !== 0));
        assert.equal(distinct.size, 1, `pipelined on 1 connection, not ${distinct.size}`);
        // A transaction still has a connection of its own.
        const inTx = await write(big.kysely, async (tx) => (await backend.execute(tx)).rows[0]!.pid);
        assert.ok(!distinct.has(inTx), 'a transaction does not share a pipelined connection');
      } finally {
        await big.close();
      }
    });
  });
}
