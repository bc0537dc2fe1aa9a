// write() with `rerun` runs a transaction that PostgreSQL cancelled for a conflict (a deadlock,
// a serialization failure) again, up to CONFLICT_TRIES times in all, each run from the start with
// nothing of the one before; any other error, or a write without `rerun`, is the caller's at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { CONFLICT_TRIES, write } from '../../src/db/write.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const conflict = (code: string) => Object.assign(new Error('deadlock detected'), { code });

for (const dialect of testDialects())
  describe(`write() and conflicts between transactions [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      await sql`create table rerun_probe (n integer)`.execute(tdb.db.kysely);
    });
    after(() => tdb.drop());
    const count = async () => Number((await sql<{ c: number }>`select count(*) as c from rerun_probe`.execute(tdb.db.kysely)).rows[0]!.c);

    test('cancelled twice for a deadlock, then committed: three runs, one row, two notices', async () => {
      let runs = 0;
      const noticed: unknown[] = [];
      const out = await write(
        tdb.db.kysely,
        async (tx) => {
          runs++;
          await sql`insert into rerun_probe (n) values (${runs})`.execute(tx);
          if (runs < 3) throw conflict(runs === 1 ? '40P01' : '40001');
          return runs;
        },
        { rerun: (err) => noticed.push(err) },
      );
      assert.equal(out, 3);
      assert.equal(noticed.length, 2);
      assert.equal(await count(), 1);
      await sql`delete from rerun_probe`.execute(tdb.db.kysely);
    });

    test('a conflict every time: CONFLICT_TRIES runs, then the conflict is thrown, nothing written', async () => {
      let runs = 0;
      await assert.rejects(
        write(
          tdb.db.kysely,
          async (tx) => {
            runs++;
            await sql`insert into rerun_probe (n) values (${runs})`.execute(tx);
            throw conflict('40P01');
          },
          { rerun: () => {} },
        ),
        { code: '40P01' },
      );
      assert.equal(runs, CONFLICT_TRIES);
      assert.equal(await count(), 0);
    });

    test('without rerun, or for any other error, one run', async () => {
      let runs = 0;
      await assert.rejects(
        write(tdb.db.kysely, async () => {
          runs++;
          throw conflict('40P01');
        }),
        { code: '40P01' },
      );
      await assert.rejects(
        write(
          tdb.db.kysely,
          async () => {
            runs++;
            throw conflict('23505');
          },
          { rerun: () => {} },
        ),
        { code: '23505' },
      );
      assert.equal(runs, 2);
    });
  });
