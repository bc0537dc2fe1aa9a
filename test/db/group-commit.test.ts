// Transactions committed together (src/db/postgres/group-commit.ts): on PostgreSQL, creates that reach
// COMMIT in the same turn, made only of inserts and scope locks for inserts, go out as one
// transaction, and a failure in the group is met by each transaction on its own. On SQLite every
// transaction commits by itself; the outcomes checked here are the same on both.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { deferred } from '../../src/db/pipeline.ts';
import { write } from '../../src/db/write.ts';
import { transactionRoundTrips } from '../../src/db/postgres/connection.ts';
import type { Db, Tx } from '../../src/db/types.ts';
import { insertList, LISTS, type ListRow } from '../../src/lists/repository.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { checkEntries } from '../helpers/rank.ts';

function row(workspaceId: string, id: string): ListRow {
  const at = new Date().toISOString();
  return { id, workspace_id: workspaceId, external_id: null, name: id, object_type: 'account', member_count: 0, created_at: at, updated_at: at };
}

type Handle = Pick<Db, 'kysely' | 'dialect' | 'pool'>;

/**
 * Runs one transaction per item. On PostgreSQL each holds its connection before any goes on, so
 * that all of them reach COMMIT in the same turn: the items are at most the pool's transaction
 * slots, or the last would wait for a connection the others never give back. SQLite runs one
 * transaction at a time, so there they go one after the other. Settles each.
 */
async function together<T>(handle: Handle, items: T[], fn: (tx: Tx, item: T) => Promise<void>) {
  const db = handle.kysely;
  const postgres = handle.dialect === 'postgres';
  const afterCommitFailures: unknown[] = [];
  let go!: () => void;
  const started = postgres ? new Promise<void>((r) => (go = r)) : Promise.resolve();
  const slots = handle.pool?.transactionSlots;
  if (postgres) assert.ok(slots !== undefined && items.length <= slots, `${items.length} transactions at once, ${slots} connections for them`);
  let entered = 0;
  const runs = items.map((item) =>
    write(
      db,
      async (tx) => {
        if (++entered === items.length && postgres) go();
        await started;
        await fn(tx, item);
      },
      { followUpFailed: (err) => afterCommitFailures.push(err) },
    ),
  );
  const outcomes = await Promise.allSettled(runs);
  // Work after COMMIT that failed by now fails the test, not silently (the ranked index's upkeep;
  // none is due at these sizes).
  assert.deepEqual(afterCommitFailures, []);
  return outcomes;
}

eachDialect('transactions committed together', (ctx) => {
  test('creates of one workspace that reach COMMIT together commit in one write, each with its row and its count', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids = Array.from({ length: 7 }, (_, i) => `lst_group_${i}`);
    const before = transactionRoundTrips();
    const outcomes = await together(t.deps.db, ids, (tx, id) => insertList(tx, row(s.workspaceId, id)));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ids.map(() => 'fulfilled'),
    );
    if (t.deps.db.dialect === 'postgres') assert.equal(transactionRoundTrips() - before, 1, 'seven creates, one write');
    const page = (await call(t, s.secret, 'GET', '/v1/lists?limit=25')).json();
    assert.deepEqual(page.data.map((l: { id: string }) => l.id).sort(), ids);
    assert.equal(page.totalCount, 7);
    assert.equal((await checkEntries(t.deps.db.kysely, LISTS, [s.workspaceId])).total, 7);
  });

  test("one transaction's failure is its own: the others of its group commit", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const taken = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'taken', $objectType: 'account' } })).json().id as string;
    const ids = ['lst_fail_0', 'lst_fail_1', taken, 'lst_fail_3', 'lst_fail_4'];
    const before = transactionRoundTrips();
    const outcomes = await together(t.deps.db, ids, (tx, id) => insertList(tx, row(s.workspaceId, id)));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    const failure = outcomes[2] as PromiseRejectedResult;
    assert.match(String((failure.reason as Error).message), /duplicate key|UNIQUE constraint/, 'the duplicate id, as its own error');
    // On PostgreSQL: the group's write, rolled back, then each transaction on its own.
    if (t.deps.db.dialect === 'postgres') assert.equal(transactionRoundTrips() - before, 1 + ids.length);
    const page = (await call(t, s.secret, 'GET', '/v1/lists?limit=25')).json();
    assert.deepEqual(page.data.map((l: { id: string }) => l.id).sort(), [...ids.filter((id) => id !== taken), taken].sort());
    assert.equal(page.totalCount, 5);
    assert.equal((await checkEntries(t.deps.db.kysely, LISTS, [s.workspaceId])).total, 5);
  });

  test('a transaction with any other statement commits on its own', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids = ['lst_alone_0', 'lst_alone_1', 'lst_alone_2', 'lst_alone_3'];
    const before = transactionRoundTrips();
    const outcomes = await together(t.deps.db, ids, async (tx, id) => {
      await insertList(tx, row(s.workspaceId, id));
      // An update is not an insert of a new row: this transaction may not join a group.
      if (id === 'lst_alone_3') await deferred(tx, sql`update lists set name = 'renamed' where id = ${id}`);
    });
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ids.map(() => 'fulfilled'),
    );
    if (t.deps.db.dialect === 'postgres') assert.equal(transactionRoundTrips() - before, 2, 'three together, one alone');
    const names = await t.deps.db.kysely.selectFrom('lists').select(['id', 'name']).where('id', 'in', ids).orderBy('id').execute();
    assert.deepEqual(
      names.map((n) => n.name),
      ['lst_alone_0', 'lst_alone_1', 'lst_alone_2', 'renamed'],
    );
  });
});
