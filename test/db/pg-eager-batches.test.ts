// Deferred statements whose parameters reach EAGER.params go out without waiting for the next
// statement awaited, on PostgreSQL (src/db/postgres/connection.ts): a bulk write runs on the server
// while its caller builds the next rows. Their failure is the failure of the next statement awaited,
// or of COMMIT, and the transaction rolls back whole.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { EAGER } from '../../src/db/postgres/connection.ts';
import { deferred } from '../../src/db/pipeline.ts';
import { write } from '../../src/db/write.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

/** Counts the socket writes to PostgreSQL while `fn` runs. */
async function writesDuring<T>(fn: (writes: () => number) => Promise<T>): Promise<T> {
  let n = 0;
  const proto = net.Socket.prototype;
  const inherited = Reflect.get<net.Socket, 'write'>(proto, 'write');
  Object.defineProperty(proto, 'write', {
    configurable: true,
    writable: true,
    value: function (this: net.Socket, ...args: Parameters<net.Socket['write']>) {
      if (this.remotePort === 5432) n++;
      return inherited.apply(this, args);
    },
  });
  try {
    return await fn(() => n);
  } finally {
    Reflect.deleteProperty(proto, 'write');
  }
}

const turn = () => new Promise((r) => setImmediate(r));

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`deferred statements sent without waiting [${dialect}]`, () => {
    let tdb: TestDb;
    const params = EAGER.params;
    before(async () => {
      tdb = await createTestDb(dialect);
      await sql`create table eager_rows (v text not null)`.execute(tdb.db.kysely);
      // The writes counted are the statements': a transaction's connection is open before them.
      await write(tdb.db.kysely, (tx) => sql`select 1`.execute(tx));
      EAGER.params = 4;
    });
    after(async () => {
      EAGER.params = params;
      await tdb.drop();
    });
    const rows = (...vs: (string | null)[]) => sql`insert into eager_rows (v) values ${sql.join(vs.map((v) => sql`(${v})`))}`;
    const count = async () => Number((await sql<{ c: string }>`select count(*) as c from eager_rows`.execute(tdb.db.kysely)).rows[0]?.c);

    test('a deferred batch that reaches the bound goes out before any statement is awaited; one below it waits', async () => {
      await sql`delete from eager_rows`.execute(tdb.db.kysely);
      await writesDuring(async (writes) =>
        write(tdb.db.kysely, async (tx) => {
          await deferred(tx, rows('a', 'b'));
          await turn();
          assert.equal(writes(), 0, 'two parameters wait for the next statement awaited');
          await deferred(tx, rows('c', 'd'));
          await turn();
          assert.ok(writes() >= 1, 'four parameters go out at once');
          const seen = await sql<{ c: string }>`select count(*) as c from eager_rows`.execute(tx);
          assert.equal(Number(seen.rows[0]?.c), 4);
        }),
      );
      assert.equal(await count(), 4);
    });

    test('at most EAGER.batches batches are in flight: the next deferred statement waits for them to land', async () => {
      await sql`delete from eager_rows`.execute(tdb.db.kysely);
      const batches = EAGER.batches;
      EAGER.batches = 2;
      try {
        await write(tdb.db.kysely, async (tx) => {
          const slow = sql`insert into eager_rows (v) select ${'s'} || pg_sleep(0.3)::text || ${'x'} || ${'y'} || ${'z'}`;
          await deferred(tx, slow);
          const t0 = performance.now();
          await deferred(tx, rows('a', 'b', 'c', 'd'));
          assert.ok(performance.now() - t0 >= 250, 'the second batch in flight waited for the first to land');
        });
      } finally {
        EAGER.batches = batches;
      }
      assert.equal(await count(), 5);
    });

    test("a failing batch sent without waiting is the next awaited statement's failure, and nothing is committed", async () => {
      await sql`delete from eager_rows`.execute(tdb.db.kysely);
      await assert.rejects(
        write(tdb.db.kysely, async (tx) => {
          await deferred(tx, rows('a', null, 'c', 'd'));
          await deferred(tx, rows('e', 'f', 'g', 'h'));
          await sql`select 1`.execute(tx);
        }),
        /null value in column "v"/,
      );
      assert.equal(await count(), 0);
    });

    test("a failing batch sent without waiting is COMMIT's failure, and the connection serves the next transaction", async () => {
      await sql`delete from eager_rows`.execute(tdb.db.kysely);
      await assert.rejects(
        write(tdb.db.kysely, async (tx) => {
          await deferred(tx, rows('a', 'b', null, 'd'));
        }),
        /null value in column "v"/,
      );
      assert.equal(await count(), 0);
      await write(tdb.db.kysely, async (tx) => deferred(tx, rows('x', 'y', 'z', 'w')));
      assert.equal(await count(), 4);
    });
  });
}
