// Restores beside creates and deletes (docs/trash.md §Restore, docs/pages.md §Creates that only
// insert): on PostgreSQL a restore in a write that runs follow-ups (as `rolodex trash restore`
// runs it) takes its listing's lock shared and counts a +1 delta, as a create does, unless it brings
// back a unique value; two restores of one entry meet on the entry's row: the second waits for the
// first and finds the entry gone. Tiny buckets make leaves split and merge within a few writes.
// SQLite has one writer and writes no deltas.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/write.ts';
import { rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { AppError } from '../../src/lib/errors.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { createRecord, RECORD_TYPES } from '../../src/records/service.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';
import { checkEntries, checkPages, timeout, useRankSizes } from '../helpers/rank.ts';

/** As `rolodex trash restore` runs one id. */
function restoreAs(t: TestApp, workspaceId: string, id: string) {
  return write(t.deps.db.kysely, (tx) => restore(operatorCtx(tx, workspaceId), { id }), { followUpFailed: () => {} });
}

async function contacts(t: TestApp, secret: string, n: number, name: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await call(t, secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: name, lastName: `${i}` } } });
    assert.equal(r.statusCode, 200, r.body);
    ids.push(r.json().id);
  }
  return ids;
}

eachDialect('restores beside creates', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 }, fold: 6 });
  test('a restore does not wait for a create of its type that has not committed', async (tc) => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [id] = await contacts(t, s.secret, 1, 'Gone');
    assert.equal((await call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)).statusCode, 200);
    if (t.deps.db.dialect !== 'postgres') return; // one writer at a time: nothing runs side by side
    await write(
      t.deps.db.kysely,
      async (tx) => {
        await createRecord(operatorCtx(tx, s.workspaceId), { type: RECORD_TYPES.contact, fields: { $name: { firstName: 'Held', lastName: 'Open' } } });
        await sql`select 1`.execute(tx); // the lock and the row went out with it: held until COMMIT
        const r = await Promise.race([restoreAs(t, s.workspaceId, id!), timeout(5000)]);
        assert.equal(r.id, id);
      },
      { followUpFailed: (err) => tc.diagnostic(String(err)) },
    );
    await rankUpkeepSettled();
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 2);
    assert.equal((await checkEntries(t.deps.db.kysely, RECORDS, [s.workspaceId, 'contact'])).total, 2);
  });

  test('two restores of one entry meet on its row: the second waits for the first, then finds the entry gone', async () => {
    const t = ctx();
    if (t.deps.db.dialect !== 'postgres') return; // one writer at a time: restores never overlap
    const s = await seedWorkspace(t);
    const [id] = await contacts(t, s.secret, 1, 'Twice');
    assert.equal((await call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)).statusCode, 200);
    let restored!: () => void;
    const ready = new Promise<void>((ok) => (restored = ok));
    const first = write(
      t.deps.db.kysely,
      async (tx) => {
        const r = await restore(operatorCtx(tx, s.workspaceId), { id: id! });
        restored();
        assert.ok(await someoneWaits(tx), 'the second restore waits for the first');
        return r;
      },
      { followUpFailed: () => {} },
    );
    await ready;
    const second = restoreAs(t, s.workspaceId, id!).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.equal((await first).id, id);
    const reason = await second;
    assert.ok(reason instanceof AppError && reason.code === 'resource_not_found', String(reason));
    await rankUpkeepSettled();
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 1);
    assert.equal((await checkEntries(t.deps.db.kysely, RECORDS, [s.workspaceId, 'contact'])).total, 1);
  });

  test('concurrent restores, deletes and creates: counts and pages exact; a record restored twice at once comes back once', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids = await contacts(t, s.secret, 40, 'C');
    const gone = ids.filter((_, i) => i % 4 !== 0);
    for (const id of gone) assert.equal((await call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)).statusCode, 200);
    await rankUpkeepSettled();
    const back = gone.filter((_, i) => i % 2 === 0);
    const kept = ids.filter((_, i) => i % 4 === 0);
    const outcomes = await Promise.allSettled([
      ...back.map((id) => restoreAs(t, s.workspaceId, id)),
      restoreAs(t, s.workspaceId, back[0]!),
      ...kept.slice(0, 5).map((id) => call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)),
      ...Array.from({ length: 5 }, (_, i) => call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'N', lastName: `${i}` } } })),
    ]);
    const restores = outcomes.slice(0, back.length + 1);
    const refused = restores.filter((o) => o.status === 'rejected');
    assert.equal(refused.length, 1, 'one of the two restores of one entry finds it gone');
    const reason = (refused[0] as PromiseRejectedResult).reason as AppError;
    assert.ok(reason instanceof AppError && reason.code === 'resource_not_found', String(reason));
    for (const o of outcomes.slice(back.length + 1)) {
      assert.equal(o.status, 'fulfilled');
      const r = (o as PromiseFulfilledResult<{ statusCode: number; body: string }>).value;
      assert.equal(r.statusCode, 200, r.body);
    }
    await rankUpkeepSettled();
    const db = t.deps.db.kysely;
    const total = 40 - gone.length + back.length - 5 + 5;
    assert.equal((await checkEntries(db, RECORDS, [s.workspaceId, 'contact'])).total, total);
    await checkPages(db, RECORDS, [s.workspaceId, 'contact'], { offsets: [0, 4, 9, 14, total - 1, total] });
    const page = (await call(t, s.secret, 'GET', `/v1/contacts?limit=5&offset=${total - 5}`)).json();
    assert.equal(page.totalCount, total);
    assert.equal(page.data.length, 5);
  });
});
