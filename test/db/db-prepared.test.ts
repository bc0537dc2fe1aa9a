// Hot reads (src/db/prepared.ts) run outside transactions on a fast reader of their own: a second
// SQLite connection, or named statements on PostgreSQL. They must still read exactly what a plain
// query would: committed rows only, a transaction's own rows inside it, and the same arguments.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import type { Executor } from '../../src/db/types.ts';
import { prepared } from '../../src/db/prepared.ts';
import { findList } from '../../src/lists/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { write } from '../../src/db/write.ts';

// node:sqlite returns rows without a prototype; compare plain copies.
const plain = <R>(rows: R[]) => rows.map((r) => ({ ...r }));
const byId = prepared((db: Executor, id: string) => db.selectFrom('workspaces').select('name').where('id', '=', id));
const workspaceName = async (db: Executor, id: string) => plain(await byId(db, id));
const namesAfterQuery = prepared((db: Executor, prefix: string, limit: number) =>
  db.selectFrom('workspaces').select('name').where('name', '>', prefix).where('name', 'like', 'w-%').orderBy('name').limit(limit),
);
const namesAfter = async (db: Executor, prefix: string, limit: number) => plain(await namesAfterQuery(db, prefix, limit));

for (const dialect of testDialects()) {
  describe(`prepared reads [${dialect}]`, () => {
    let t: TestDb;
    before(async () => {
      t = await createTestDb(dialect);
    });
    after(() => t.drop());
    const insert = (db: Executor, id: string, name: string) => db.insertInto('workspaces').values({ id, name, created_at: new Date().toISOString() }).execute();

    test('outside a transaction: committed rows only; inside: the transaction sees its own', async () => {
      const db = t.db.kysely;
      await insert(db, 'ws_committed', 'w-committed');
      assert.deepEqual(await workspaceName(db, 'ws_committed'), [{ name: 'w-committed' }]);

      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let inside: unknown;
      const tx = write(db, async (trx) => {
        await insert(trx, 'ws_pending', 'w-pending');
        inside = await workspaceName(trx, 'ws_pending');
        await held;
      });
      try {
        // Let the transaction write, then read from outside while it is still open.
        while (inside === undefined) await new Promise((r) => setTimeout(r, 5));
        assert.deepEqual(inside, [{ name: 'w-pending' }]);
        assert.deepEqual(await workspaceName(db, 'ws_pending'), []);
      } finally {
        release();
        await tx;
      }
      assert.deepEqual(await workspaceName(db, 'ws_pending'), [{ name: 'w-pending' }]);
    });

    test('a write that is rolled back is seen neither while pending nor after', async () => {
      const db = t.db.kysely;
      let during: unknown;
      await assert.rejects(
        write(db, async (trx) => {
          await insert(trx, 'ws_rolled_back', 'w-rolled-back');
          // From outside, while the row is written but not committed.
          during = await workspaceName(db, 'ws_rolled_back');
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.deepEqual(during, []);
      assert.deepEqual(await workspaceName(db, 'ws_rolled_back'), []);
    });

    test('each call binds its own arguments, in the order the SQL needs them', async () => {
      const db = t.db.kysely;
      for (const n of ['a', 'b', 'c', 'd']) await insert(db, `ws_order_${n}`, `w-${n}`);
      assert.deepEqual(await namesAfter(db, 'w-a', 2), [{ name: 'w-b' }, { name: 'w-c' }]);
      assert.deepEqual(await namesAfter(db, 'w-b', 10), [{ name: 'w-c' }, { name: 'w-committed' }, { name: 'w-d' }, { name: 'w-pending' }]);
      assert.equal(await findList(db, 'ws_order_a', 'lst_missing'), undefined);
    });

    test('a table changed by a migration after the statement was prepared is read in its new shape', async () => {
      const db = t.db.kysely as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await sql`create table prepared_shape (id text primary key, a text)`.execute(db);
      await sql`insert into prepared_shape (id, a) values ('x', 'A')`.execute(db);
      const row = prepared((d: Executor, id: string) => (d as unknown as typeof db).selectFrom('prepared_shape').selectAll().where('id', '=', id));
      // Prepare it on every pooled connection the reads may use.
      for (let i = 0; i < 3; i++)
        assert.deepEqual(plain(await Promise.all([row(t.db.kysely, 'x'), row(t.db.kysely, 'x')]).then((r) => r.flat())), [
          { id: 'x', a: 'A' },
          { id: 'x', a: 'A' },
        ]);
      await sql`alter table prepared_shape add column b text not null default 'B'`.execute(db);
      for (let i = 0; i < 3; i++) assert.deepEqual(plain(await row(t.db.kysely, 'x')), [{ id: 'x', a: 'A', b: 'B' }]);
    });

    test('an argument that would shape the query, or that the build function does not declare, is refused', async () => {
      const shaped = prepared((db: Executor, column: string) => db.selectFrom('workspaces').select(column as 'name'));
      await assert.rejects(shaped(t.db.kysely, 'name'), /argument 0 is not a bound parameter/);
      const withDefault = prepared((db: Executor, id: string, name: string = 'fixed') =>
        db.selectFrom('workspaces').select('id').where('id', '=', id).where('name', '=', name),
      );
      await assert.rejects(withDefault(t.db.kysely, 'ws_x', 'other'), /2 arguments for 1 parameters/);
    });
  });
}
