// A prepared read (src/db/prepared.ts) is built and compiled once per database handle, its
// transactions included: a keyed read inside a write (a restore's, an update's) binds the
// statement its handle compiled instead of building it again in every transaction.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Executor } from '../../src/db/types.ts';
import { prepared } from '../../src/db/prepared.ts';
import { write } from '../../src/db/write.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

for (const dialect of testDialects()) {
  describe(`prepared reads compile once [${dialect}]`, () => {
    let t: TestDb;
    before(async () => {
      t = await createTestDb(dialect);
    });
    after(() => t.drop());

    test('outside and inside successive transactions, one build', async () => {
      let builds = 0;
      const nameOf = prepared((db: Executor, id: string) => {
        builds++;
        return db.selectFrom('workspaces').select('name').where('id', '=', id);
      });
      const db = t.db.kysely;
      await db.insertInto('workspaces').values({ id: 'ws_once', name: 'once', created_at: new Date().toISOString() }).execute();
      assert.deepEqual({ ...(await nameOf(db, 'ws_once'))[0] }, { name: 'once' });
      for (let i = 0; i < 3; i++) {
        const name = await write(db, async (tx) => {
          await tx
            .updateTable('workspaces')
            .set({ name: `once-${i}` })
            .where('id', '=', 'ws_once')
            .execute();
          return (await nameOf(tx, 'ws_once'))[0]?.name;
        });
        assert.equal(name, `once-${i}`, 'the transaction reads its own write');
      }
      assert.equal(builds, 1);
    });
  });
}
