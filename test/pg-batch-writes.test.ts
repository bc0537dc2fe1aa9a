// A transaction's batch goes out in one turn of the event loop on PostgreSQL (src/db/postgres.ts,
// docs/performance.md §Batches written at once): postgres.js writes its first KiB at once and
// would leave the rest, COMMIT included, to the next setImmediate, while PostgreSQL held the
// transaction open. Every socket write of the batch must happen before the event loop turns.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { deferred } from '../src/db/pipeline.ts';
import { createTestDb, type TestDb, testDialects } from './helpers/db.ts';

for (const dialect of (await testDialects()).filter((d) => d === 'postgres')) {
  describe(`batches of a transaction [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      await sql`create table batch_rows (v text not null)`.execute(tdb.db.kysely);
    });
    after(() => tdb.drop());

    test('a batch over 1 KiB, COMMIT included, is written within one turn of the event loop', async () => {
      const db = tdb.db.kysely;
      const write = async () =>
        db.transaction().execute(async (tx) => {
          for (let i = 0; i < 3; i++) await deferred(tx, sql`insert into batch_rows (v) values (${'x'.repeat(600)})`);
        });
      await write(); // statements prepared on the connection: later batches carry no text
      let turn = 0;
      let ticking = true;
      const tick = () => {
        turn++;
        if (ticking) setImmediate(tick);
      };
      tick();
      const turns: number[] = [];
      // net.Socket inherits write from its stream classes: an own property shadows it for the test.
      const proto = net.Socket.prototype;
      const inherited = Reflect.get<net.Socket, 'write'>(proto, 'write');
      assert.equal(Object.hasOwn(proto, 'write'), false);
      Object.defineProperty(proto, 'write', {
        configurable: true,
        writable: true,
        value: function (this: net.Socket, ...args: Parameters<net.Socket['write']>) {
          if (this.remotePort === 5432) turns.push(turn);
          return inherited.apply(this, args);
        },
      });
      try {
        for (let i = 0; i < 5; i++) await write();
      } finally {
        Reflect.deleteProperty(proto, 'write');
        ticking = false;
      }
      const count = await sql<{ c: number }>`select count(*) as c from batch_rows`.execute(db);
      assert.equal(Number(count.rows[0]?.c), 18);
      // Five transactions, each BEGIN, three inserts and COMMIT in one batch.
      assert.ok(turns.length >= 5, `writes: ${turns.length}`);
      const perTurn = new Map<number, number>();
      for (const t of turns) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
      assert.equal(perTurn.size, 5, `the writes fell in turns ${JSON.stringify([...perTurn])}`);
    });
  });
}
