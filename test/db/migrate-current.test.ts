// migrate() on a database that holds every migration (docs/deploy.md §Migrations): every command
// and every server start runs it, so it only reads which migrations are applied and returns,
// without the migrator's lock and transaction; a migration not applied yet still goes through them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate, MIGRATIONS } from '../../src/db/migrate.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

/** Statements of the migrator's lock and transaction. */
const locking = (statements: string[]) => statements.filter((s) => /kysely_migration_lock|pg_advisory|^\s*begin/i.test(s));

for (const dialect of testDialects()) {
  describe(`migrate() on a migrated database [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
    });
    after(async () => tdb.drop());

    test('applies nothing and reads only which migrations are applied: no lock, no transaction', async () => {
      const { result, statements } = await statementsOf(() => migrate(tdb.db));
      assert.deepEqual(result, []);
      assert.deepEqual(locking(statements), []);
      assert.ok(statements.length <= 4, statements.join('\n'));
    });

    test('a migration not applied yet is applied under the lock', async () => {
      let ran = 0;
      const later = { ...MIGRATIONS, '9999_later': { up: async () => void ran++ } };
      const { result, statements } = await statementsOf(() => migrate(tdb.db, later));
      assert.deepEqual([result, ran], [['9999_later'], 1]);
      assert.notDeepEqual(locking(statements), []);
      assert.deepEqual(await migrate(tdb.db, later), []);
      assert.equal(ran, 1);
    });
  });
}
