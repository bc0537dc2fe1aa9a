// SQLite's group commit (src/db/sqlite/group-commit.ts): transactions that share one SQLite
// transaction each settle only once their writes are durable, one's failure undoes its own writes
// and nothing of the others', and a statement outside any transaction is durable when it settles.
// "Durable" is seen from a connection of its own, as another process would see it.
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { write } from '../../src/db/write.ts';

describe('group commit on SQLite [sqlite]', () => {
  let tdb: TestDb;
  let other: DatabaseSync;
  before(async () => {
    tdb = await createTestDb('sqlite');
    await sql`create table grouped (who text primary key)`.execute(tdb.db.kysely);
    other = new DatabaseSync(tdb.sqliteFile!, { readOnly: true });
  });
  after(async () => {
    other.close();
    await tdb.drop();
  });
  beforeEach(() => sql`delete from grouped`.execute(tdb.db.kysely));

  /** What a connection of its own sees committed. */
  const committed = () => (other.prepare('select who from grouped order by who').all() as { who: string }[]).map((r) => r.who);
  const insert = (who: string) =>
    write(tdb.db.kysely, async (tx) => {
      await sql`insert into grouped (who) values (${who})`.execute(tx);
      await sql`select count(*) from grouped`.execute(tx);
    });

  test('each of many concurrent transactions settles once its writes are committed', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, '0')}`);
    const seen = await Promise.all(names.map((n) => insert(n).then(() => committed().includes(n))));
    assert.deepEqual(
      seen,
      names.map(() => true),
    );
    assert.deepEqual(committed(), names);
  });

  test('a transaction that fails among others undoes only its own writes', async () => {
    const failing = write(tdb.db.kysely, async (tx) => {
      await sql`insert into grouped (who) values ('failing')`.execute(tx);
      throw new Error('refused');
    });
    // The same key twice: the second insert fails on the primary key, inside the group.
    const results = await Promise.allSettled([insert('a'), failing, insert('b'), insert('a'), insert('c')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(committed(), ['a', 'b', 'c']);
  });

  test('a statement outside a transaction is committed when it settles, with the group before it', async () => {
    const grouped = insert('in-group');
    const alone = sql`insert into grouped (who) values ('alone')`.execute(tdb.db.kysely).then(() => committed());
    await grouped;
    assert.deepEqual(await alone, ['alone', 'in-group']);
  });

  test('a transaction that starts after the others settled starts a new group', async () => {
    await Promise.all([insert('x'), insert('y')]);
    await insert('z');
    assert.deepEqual(committed(), ['x', 'y', 'z']);
  });
});
