// Deletes beside creates (docs/pages.md §Creates that only insert): on PostgreSQL a record's delete
// takes its listing's lock shared and counts a negative delta, so it does not wait for a create or
// another delete of the same type; two deletes of one record meet on its row: the second waits for
// the first and answers what it trashed. Leaves the deletes
// shrink below their minimum are merged after COMMIT. Tiny buckets make that happen within a few
// deletes. SQLite has one writer and writes no deltas.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/write.ts';
import { partitionKey, rankSizes, rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { createRecord, RECORD_TYPES } from '../../src/records/service.ts';
import { trashRecord } from '../../src/trash/service.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';
import { checkEntries, checkPages, timeout, useRankSizes } from '../helpers/rank.ts';

eachDialect('deletes beside creates', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 }, fold: 6 });
  test('a delete does not wait for a create of its type that has not committed', async (tc) => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const first = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ada', lastName: 'First' } } });
    assert.equal(first.statusCode, 200, first.body);
    if (t.deps.db.dialect !== 'postgres') return; // one writer at a time: nothing runs side by side
    await write(
      t.deps.db.kysely,
      async (tx) => {
        await createRecord(operatorCtx(tx, s.workspaceId), { type: RECORD_TYPES.contact, fields: { $name: { firstName: 'Held', lastName: 'Open' } } });
        await sql`select 1`.execute(tx); // the lock and the row went out with it: held until COMMIT
        const r = await Promise.race([call(t, s.secret, 'DELETE', `/v1/contacts/${first.json().id}`), timeout(5000)]);
        assert.equal(r.statusCode, 200, r.body);
      },
      { followUpFailed: (err) => tc.diagnostic(String(err)) },
    );
    const page = (await call(t, s.secret, 'GET', '/v1/contacts')).json();
    assert.equal(page.totalCount, 1);
    assert.equal((await checkEntries(t.deps.db.kysely, RECORDS, [s.workspaceId, 'contact'])).total, 1);
  });

  test('two deletes of one record meet on its row: the second waits for the first and answers the record it trashed', async (tc) => {
    const t = ctx();
    if (t.deps.db.dialect !== 'postgres') return; // one writer at a time: deletes never overlap
    const s = await seedWorkspace(t);
    const created = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Del', lastName: 'Twice' } } });
    assert.equal(created.statusCode, 200, created.body);
    const id = created.json().id as string;
    let trashed!: () => void;
    const ready = new Promise<void>((ok) => (trashed = ok));
    const first = write(
      t.deps.db.kysely,
      async (tx) => {
        const r = await trashRecord(operatorCtx(tx, s.workspaceId), RECORD_TYPES.contact, { id });
        trashed();
        assert.ok(await someoneWaits(tx), 'the second delete waits for the first');
        return r;
      },
      { followUpFailed: (err) => tc.diagnostic(String(err)) },
    );
    await ready;
    const second = call(t, s.secret, 'DELETE', `/v1/contacts/${id}`);
    const resource = await first;
    const r = await second;
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), JSON.parse(JSON.stringify(resource)));
    await rankUpkeepSettled();
    const db = t.deps.db.kysely;
    const trash = await db.selectFrom('trash').select('id').where('workspace_id', '=', s.workspaceId).execute();
    assert.deepEqual(
      trash.map((e) => e.id),
      [id],
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
    assert.equal((await checkEntries(db, RECORDS, [s.workspaceId, 'contact'])).total, 0);
  });

  test('two deletes of one leaf that overlap: the one that commits last sees the leaf under its minimum and merges it', async (tc) => {
    const t = ctx();
    if (t.deps.db.dialect !== 'postgres') return; // one writer at a time: deletes never overlap
    const s = await seedWorkspace(t);
    for (let i = 0; i < 30; i++) {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'L', lastName: `${i}` } } });
      assert.equal(r.statusCode, 200, r.body);
    }
    await rankUpkeepSettled();
    const db = t.deps.db.kysely;
    const scope = partitionKey(RECORDS, [s.workspaceId, 'contact']);
    const leaves = (
      await sql<{ lo_ts: string; lo_id: string }>`select lo_ts, lo_id from rank_buckets where scope = ${scope} and level = 0 order by lo_ts, lo_id`.execute(db)
    ).rows;
    assert.ok(leaves.length >= 3, 'the contacts fill several leaves');
    const [lo, hi] = [leaves[1]!, leaves[2]!];
    const inLeaf = (
      await db
        .selectFrom('records')
        .select('id')
        .where('workspace_id', '=', s.workspaceId)
        .where('kind', '=', 'contact')
        .where((eb) =>
          eb.and([
            eb(eb.refTuple('created_at', 'id'), '>=', eb.tuple(lo.lo_ts, lo.lo_id)),
            eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(hi.lo_ts, hi.lo_id)),
          ]),
        )
        .execute()
    ).map((r) => r.id);
    const { min } = rankSizes().leaf;
    assert.ok(inLeaf.length > min + 1, `the leaf holds ${inLeaf.length} rows`);
    // Down to one over the minimum, one delete at a time: no merge yet.
    const total = (await checkEntries(db, RECORDS, [s.workspaceId, 'contact'])).total;
    const first = inLeaf.length - (min + 1);
    for (const id of inLeaf.slice(0, first)) assert.equal((await call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)).statusCode, 200);
    await rankUpkeepSettled();
    await checkEntries(db, RECORDS, [s.workspaceId, 'contact']);
    const [a, b] = inLeaf.slice(first);
    await write(
      db,
      async (tx) => {
        await trashRecord(operatorCtx(tx, s.workspaceId), RECORD_TYPES.contact, { id: a! });
        await sql`select 1`.execute(tx);
        // The other delete sees the leaf at its minimum (this one not committed): it merges nothing.
        const r = await Promise.race([call(t, s.secret, 'DELETE', `/v1/contacts/${b}`), timeout(5000)]);
        assert.equal(r.statusCode, 200, r.body);
      },
      { followUpFailed: (err) => tc.diagnostic(String(err)) },
    );
    await rankUpkeepSettled();
    const shape = await checkEntries(db, RECORDS, [s.workspaceId, 'contact']);
    assert.equal(shape.total, total - first - 2);
  });

  test('concurrent deletes and creates: counts and pages exact, shrunk leaves merged; a record deleted twice at once answers twice', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'C', lastName: `${i}` } } });
      assert.equal(r.statusCode, 200, r.body);
      ids.push(r.json().id);
    }
    await rankUpkeepSettled();
    const gone = ids.filter((_, i) => i % 4 !== 0);
    const answers = await Promise.all([
      ...gone.map((id) => call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)),
      call(t, s.secret, 'DELETE', `/v1/contacts/${gone[0]}`),
      ...Array.from({ length: 5 }, (_, i) => call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'N', lastName: `${i}` } } })),
    ]);
    for (const r of answers) assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(answers[gone.length]!.json(), answers[0]!.json());
    await rankUpkeepSettled();
    const db = t.deps.db.kysely;
    const shape = await checkEntries(db, RECORDS, [s.workspaceId, 'contact']);
    assert.equal(shape.total, 15);
    await checkPages(db, RECORDS, [s.workspaceId, 'contact'], { offsets: [0, 4, 9, 14, 15] });
    const trash = await db
      .selectFrom('trash')
      .select((eb) => eb.fn.countAll<number>().as('c'))
      .where('workspace_id', '=', s.workspaceId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(trash.c), gone.length);
    const page = (await call(t, s.secret, 'GET', '/v1/contacts?limit=5&offset=10')).json();
    assert.equal(page.totalCount, 15);
    assert.equal(page.data.length, 5);
  });
});
