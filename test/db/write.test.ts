// Write transactions (src/db/write.ts, docs/architecture.md §Database layer): `write` hands its work
// a Tx whose state is the layer's; the work registered with afterCommit runs once the transaction
// committed, only in a write that gives followUpFailed, which alone sees a follow-up's failure;
// and the layer refuses a transaction that write did not open instead of running without its state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { afterCommit, write } from '../../src/db/write.ts';
import type { Executor } from '../../src/db/types.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

for (const dialect of testDialects()) {
  describe(`write transactions [${dialect}]`, () => {
    let t: TestDb;
    before(async () => {
      t = await createTestDb(dialect);
    });
    after(() => t.drop());
    const insert = (db: Executor, id: string) => db.insertInto('workspaces').values({ id, name: id, created_at: new Date().toISOString() }).execute();
    const names = async (id: string) => (await t.db.kysely.selectFrom('workspaces').select('name').where('id', '=', id).execute()).map((r) => r.name);

    test('a follow-up runs after COMMIT, sees what committed, and its failure is not the caller’s', async () => {
      const seen: string[][] = [];
      const failures: unknown[] = [];
      const result = await write(
        t.db.kysely,
        async (tx) => {
          await insert(tx, 'ws_follow');
          assert.equal(tx.bulk, undefined);
          assert.equal(
            afterCommit(tx, async () => void seen.push(await names('ws_follow'))),
            true,
          );
          assert.equal(
            afterCommit(tx, async () => {
              throw new Error('follow-up failed');
            }),
            true,
          );
          assert.deepEqual(seen, [], 'nothing runs before COMMIT');
          return 'done';
        },
        { followUpFailed: (err) => failures.push(err) },
      );
      assert.equal(result, 'done');
      assert.deepEqual(seen, [['ws_follow']]);
      assert.equal(failures.length, 1);
    });

    test('without followUpFailed nothing can be registered, and a rollback runs nothing', async () => {
      await write(t.db.kysely, async (tx) => {
        assert.equal(
          afterCommit(tx, async () => assert.fail('registered in a write without follow-ups')),
          false,
        );
      });
      let ran = false;
      await assert.rejects(
        write(
          t.db.kysely,
          async (tx) => {
            afterCommit(tx, async () => void (ran = true));
            throw new Error('rolled back');
          },
          { followUpFailed: () => {} },
        ),
        /rolled back/,
      );
      assert.equal(ran, false);
    });

    test('a transaction write() did not open is refused where the layer keeps state for it', async () => {
      await assert.rejects(
        // eslint-disable-next-line no-restricted-syntax -- a transaction opened around write(), on purpose
        t.db.kysely.transaction().execute(async (tx) =>
          // @ts-expect-error -- a Kysely transaction is no Tx: refused by the type and, at run time, by the layer
          afterCommit(tx, async () => {}),
        ),
        /not opened by write\(\)/,
      );
    });
  });
}
