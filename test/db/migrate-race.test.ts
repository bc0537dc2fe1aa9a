// migrate() reads only its own schema of the catalogue: other databases on the same PostgreSQL
// server creating and dropping their schemas meanwhile (other test files, other tenants) never
// fail it, whatever moment of their life its reads meet.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { migrate } from '../../src/db/migrate.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`migrate() beside other schemas coming and going [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
    });
    after(async () => tdb.drop());

    test('a migrated database migrates again without error while another schema is created, filled and dropped in a loop', async () => {
      const churn = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await churn.connect();
      const other = `t_churn_${process.pid}`;
      let running = true;
      let rounds = 0;
      const loop = (async () => {
        while (running) {
          await churn.query(`create schema ${other}; create table ${other}.kysely_migration (name text, extra int); create table ${other}.t (a int, b text)`);
          await churn.query(`alter table ${other}.t drop column b; drop table ${other}.kysely_migration; drop schema ${other} cascade`);
          rounds++;
        }
      })();
      const failures: string[] = [];
      try {
        for (let i = 0; i < 150; i++) {
          const applied = await migrate(tdb.db).catch((err: Error) => {
            failures.push(err.message);
            return [];
          });
          assert.deepEqual(applied, []);
        }
      } finally {
        running = false;
        await loop;
        await churn.query(`drop schema if exists ${other} cascade`);
        await churn.end();
      }
      assert.ok(rounds > 20, `the other schema came and went ${rounds} times`);
      assert.deepEqual(failures, []);
    });
  });
}
