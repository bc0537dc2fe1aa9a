// A transaction's batch goes out in one turn of the event loop on PostgreSQL (src/db/postgres/connection.ts,
// docs/performance.md §Batches written at once): postgres.js writes its first KiB at once and
// would leave the rest, COMMIT included, to the next setImmediate, while PostgreSQL held the
// transaction open. Every socket write of the batch must happen before the event loop turns.
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { deferred, deferredRows } from '../../src/db/pipeline.ts';
import { defineRank } from '../../src/db/rank/def.ts';
import { lockPartition } from '../../src/db/rank/lock.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { statementsOf } from '../helpers/sql-spy.ts';
import { write } from '../../src/db/write.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`batches of a transaction [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      await sql`create table batch_rows (v text not null)`.execute(tdb.db.kysely);
    });
    after(() => tdb.drop());

    test('a batch over 1 KiB, COMMIT included, is written within one turn of the event loop', async () => {
      const db = tdb.db.kysely;
      const batch = async () =>
        write(db, async (tx) => {
          for (let i = 0; i < 3; i++) await deferred(tx, sql`insert into batch_rows (v) values (${'x'.repeat(600)})`);
        });
      await batch(); // statements prepared on the connection: later batches carry no text
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
        for (let i = 0; i < 5; i++) await batch();
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

    test("a turn's writes of a batch over 1 KiB go out as one write to the socket", async () => {
      const db = tdb.db.kysely;
      const batch = async () =>
        write(db, async (tx) => {
          for (let i = 0; i < 3; i++) await deferred(tx, sql`insert into batch_rows (v) values (${'y'.repeat(600)})`);
        });
      await batch();
      // postgres.js writes to the socket at each KiB it buffers; what reaches the socket's handle
      // (net.Socket's _write, or _writev for several at once) is one write per batch
      // (src/db/postgres/socket.ts).
      const proto = net.Socket.prototype as unknown as Record<'_write' | '_writev', (this: net.Socket, ...args: unknown[]) => void>;
      const asked = Reflect.get<net.Socket, 'write'>(net.Socket.prototype, 'write');
      let writes = 0;
      let handed = 0;
      const originals = { _write: proto._write, _writev: proto._writev };
      for (const name of ['_write', '_writev'] as const)
        proto[name] = function (this: net.Socket, ...args: unknown[]) {
          if (this.remotePort === 5432) handed++;
          return originals[name].apply(this, args);
        };
      Object.defineProperty(net.Socket.prototype, 'write', {
        configurable: true,
        writable: true,
        value: function (this: net.Socket, ...args: Parameters<net.Socket['write']>) {
          if (this.remotePort === 5432) writes++;
          return asked.apply(this, args);
        },
      });
      try {
        for (let i = 0; i < 5; i++) await batch();
      } finally {
        Reflect.deleteProperty(net.Socket.prototype, 'write');
        Object.assign(proto, originals);
      }
      assert.ok(writes >= 10, `postgres.js wrote ${writes} times`);
      assert.equal(handed, 5, `the socket wrote ${handed} times for 5 batches`);
    });

    test('statements without parameters whose answer nobody reads go out with BEGIN as one simple query', async () => {
      const db = tdb.db.kysely;
      const { result: got, statements: sent } = await statementsOf(() =>
        write(db, async (tx) => {
          await deferred(tx, sql`select 1 as a`);
          await deferred(tx, sql`select 2 as b`);
          return (await sql<{ c: string }>`select ${'x'} as c`.execute(tx)).rows;
        }),
      );
      assert.deepEqual(got, [{ c: 'x' }]);
      assert.equal(sent[0], 'begin;\nselect 1 as a;\nselect 2 as b', JSON.stringify(sent));
      assert.equal(sent[1], 'select $1 as c', JSON.stringify(sent));
    });

    test('a statement without parameters whose answer is read goes out on its own, and gets its own answer', async () => {
      const db = tdb.db.kysely;
      // postgres.js folds the answers of statements without rows into the next one's within one
      // simple query: grouped, SET's answer would have stood for BEGIN's, and the awaited
      // statement would have found none of its own.
      const { result: got, statements: sent } = await statementsOf(() =>
        write(db, async (tx) => {
          const set = await sql`set local statement_timeout = 5000`.execute(tx);
          const rows = await deferredRows(tx, sql<{ a: number }>`select 1 as a`);
          const prep = await sql`prepare batch_probe as select 2`.execute(tx);
          const after = await sql<{ b: number }>`select 2 as b`.execute(tx);
          await sql`deallocate batch_probe`.execute(tx);
          return { set: set.rows, rows: [...(rows.rows ?? [])], prep: prep.rows, after: after.rows };
        }),
      );
      assert.deepEqual(got, { set: [], rows: [{ a: 1 }], prep: [], after: [{ b: 2 }] });
      assert.equal(sent[0], 'begin', JSON.stringify(sent));
    });

    test('a failure within such a group fails its transaction, and the connection serves the next one', async () => {
      const db = tdb.db.kysely;
      const { statements: sent } = await statementsOf(() =>
        assert.rejects(
          write(db, async (tx) => {
            await deferred(tx, sql`select 1 / 0`);
            await deferred(tx, sql`select 2`);
            await deferred(tx, sql`insert into batch_rows (v) values (${'kept?'})`);
            await sql`select ${1}`.execute(tx);
          }),
          /division by zero/,
        ),
      );
      assert.equal(sent[0], 'begin;\nselect 1 / 0;\nselect 2', JSON.stringify(sent));
      const rows = await write(db, (tx) => sql<{ c: number }>`select count(*) as c from batch_rows where v = 'kept?'`.execute(tx));
      assert.equal(Number(rows.rows[0]?.c), 0);
    });

    test("a scope's lock, sent as a number, is the lock of that scope's text, quotes and backslashes included", async () => {
      const db = tdb.db.kysely;
      const def = defineRank({ name: 'batch', table: 'batch_rows', by: ['v'], ts: 'v', id: 'v' });
      const value = "o'k\\n";
      const held = await write(db, async (tx) => {
        await lockPartition(tx, def, [value]);
        const r = await sql<{ c: number }>`select count(*) as c from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()
          and ((classid::bigint << 32) | objid::bigint) = ${sha256Key(`batch:${value}`)}::bigint`.execute(tx);
        return Number(r.rows[0]?.c);
      });
      assert.equal(held, 1);
    });
  });
}

/** The advisory-lock key of a scope's text: the first 64 bits of its SHA-256, signed. */
function sha256Key(text: string): string {
  return createHash('sha256').update(text).digest().readBigInt64BE(0).toString();
}
