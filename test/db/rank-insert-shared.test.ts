// Creates that only insert (docs/pages.md §Creates that only insert): on PostgreSQL a create takes
// its scope's lock shared and records count deltas, so a create never waits for another create of
// the same workspace; the deltas are added by readers and folded in under the exclusive lock once a
// scope has gathered enough. SQLite has one writer and writes no deltas. Tiny buckets and a tiny
// fold threshold make leaves split and deltas fold within a few creates.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/write.ts';
import { lockPartition, rankUpkeepSettled, partitionKey, setRankSizes } from '../../src/db/rank/index.ts';
import { insertList, LISTS } from '../../src/lists/repository.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { checkCreated, checkEntries, timeout, useRankSizes } from '../helpers/rank.ts';

eachDialect('creates that only insert', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 }, fold: 6 });
  test('a create does not wait for another create of its workspace that has not committed', async (tc) => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const first = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'first', $objectType: 'account' } });
    assert.equal(first.statusCode, 200, first.body);
    if (t.deps.db.dialect !== 'postgres') {
      // One writer at a time: nothing to run side by side, and no deltas.
      const d = await sql<{ c: number }>`select count(*) as c from rank_deltas`.execute(t.deps.db.kysely);
      assert.equal(Number(d.rows[0]?.c), 0);
      return;
    }
    const at = new Date().toISOString();
    const row = {
      id: 'lst_held',
      workspace_id: s.workspaceId,
      external_id: null,
      name: 'held',
      object_type: 'account' as const,
      member_count: 0,
      created_at: at,
      updated_at: at,
    };
    await write(
      t.deps.db.kysely,
      async (tx) => {
        await insertList(tx, row);
        await sql`select 1`.execute(tx); // the lock and the row went out with it: held until COMMIT
        const r = await Promise.race([call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'beside', $objectType: 'account' } }), timeout(5000)]);
        assert.equal(r.statusCode, 200, r.body);
      },
      { followUpFailed: (err) => tc.diagnostic(String(err)) },
    );
    const page = (await call(t, s.secret, 'GET', '/v1/lists')).json();
    assert.deepEqual(page.data.map((l: { fields: { $name: { value: string } } }) => l.fields.$name.value).sort(), ['beside', 'first', 'held']);
    assert.equal(page.totalCount, 3);
    assert.equal((await checkEntries(t.deps.db.kysely, LISTS, [s.workspaceId])).total, 3);
  });

  test('a transaction that took a scope for inserts cannot take it for writes', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    if (t.deps.db.dialect !== 'postgres') {
      // SQLite takes no lock: both calls are no-ops.
      await write(t.deps.db.kysely, async (tx) => {
        await lockPartition(tx, LISTS, [s.workspaceId], 'insert');
        await lockPartition(tx, LISTS, [s.workspaceId]);
      });
      return;
    }
    await write(
      t.deps.db.kysely,
      async (tx) => {
        await lockPartition(tx, LISTS, [s.workspaceId], 'insert');
        await assert.rejects(lockPartition(tx, LISTS, [s.workspaceId]), /taken for inserts/);
      },
      { followUpFailed: () => {} },
    );
  });

  test('concurrent creates: counts and pages exact, leaves split, deltas folded', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) => call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: `l${i}`, $objectType: 'account' } })),
    );
    for (const r of created) assert.equal(r.statusCode, 200, r.body);
    const db = t.deps.db.kysely;
    await checkCreated(db, LISTS, [s.workspaceId], 40);
    const d = await sql<{ c: number }>`select count(*) as c from rank_deltas where scope = ${partitionKey(LISTS, [s.workspaceId])}`.execute(db);
    // Two delta rows per create (one per level) unless folded: 80 if nothing was.
    if (t.deps.db.dialect === 'postgres') assert.ok(Number(d.rows[0]?.c) < 40, `${d.rows[0]?.c} delta rows left`);
    else assert.equal(Number(d.rows[0]?.c), 0);
    for (const offset of [0, 13, 39, 40]) {
      // Pages read the counts with the deltas not yet folded.
      const page = (await call(t, s.secret, 'GET', `/v1/lists?limit=5&offset=${offset}`)).json();
      assert.equal(page.totalCount, 40);
      assert.equal(page.data.length, Math.max(0, Math.min(5, 40 - offset)));
    }
  });

  test('deltas are folded once a scope has gathered enough, with no leaf to split', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    setRankSizes({ leaf: { max: 1024, target: 512, min: 128 }, fanout: { max: 64, target: 32, min: 8 }, fold: 6 });
    try {
      for (let i = 0; i < 20; i++) {
        const r = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: `f${i}`, $objectType: 'account' } });
        assert.equal(r.statusCode, 200, r.body);
      }
      await rankUpkeepSettled();
      const db = t.deps.db.kysely;
      assert.equal((await checkEntries(db, LISTS, [s.workspaceId])).total, 20);
      const d = await sql<{ c: number }>`select count(*) as c from rank_deltas where scope = ${partitionKey(LISTS, [s.workspaceId])}`.execute(db);
      // 40 delta rows unfolded; a fold is due at 6, after the create that saw them.
      assert.ok(Number(d.rows[0]?.c) <= (t.deps.db.dialect === 'postgres' ? 8 : 0), `${d.rows[0]?.c} delta rows left`);
    } finally {
      setRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 }, fold: 6 });
    }
  });
});
