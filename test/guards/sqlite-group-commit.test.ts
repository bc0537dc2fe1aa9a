// SQLite's transactions commit together (src/db/sqlite/group-commit.ts, docs/performance.md §SQLite
// writes committed together): transactions started in the same turn of the event loop write in one
// SQLite transaction and share its COMMIT, so while the last of them writes, none of the earlier
// ones is visible to another connection yet; once they settle, all are. One COMMIT per transaction
// would show the first before the last wrote.
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { write } from '../../src/db/write.ts';
import { GROUP_LIMITS } from '../../src/db/sqlite/group-commit.ts';

let tdb: TestDb;
let other: DatabaseSync;
before(async () => {
  tdb = await createTestDb('sqlite');
  await sql`create table grouped (n integer primary key)`.execute(tdb.db.kysely);
  other = new DatabaseSync(tdb.sqliteFile!, { readOnly: true });
});
after(async () => {
  other.close();
  await tdb.drop();
});

test('transactions started together share one COMMIT [sqlite]', async () => {
  // The group's time limit out of the way: on a loaded machine ten transactions can take longer than
  // it, and the group then commits early, as it should; what is checked here is the grouping.
  const saved = { ...GROUP_LIMITS };
  GROUP_LIMITS.ms = 60_000;
  after(() => Object.assign(GROUP_LIMITS, saved));
  const count = () => Number((other.prepare('select count(*) as n from grouped').get() as { n: number }).n);
  const seenByLast: number[] = [];
  await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      write(tdb.db.kysely, async (tx) => {
        await sql`insert into grouped (n) values (${i})`.execute(tx);
        if (i === 9) seenByLast.push(count());
      }),
    ),
  );
  assert.deepEqual(seenByLast, [0]);
  assert.equal(count(), 10);
});
