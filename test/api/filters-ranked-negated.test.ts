// A negated ranked value (docs/filtering.md §Ranked values): `$status[-equal]=X` (and several of
// them) pages the task listing without the values' sets, counted. Every page, at offsets from the
// first to past the end, is the naive page read from the records themselves and the page of the
// unranked plan (the same query with a negated filter that matches nothing, which no ranked set
// answers), after creates, status changes, deletes and restores. Tiny buckets and a tiny walk make
// the search probe across many leaves, and statuses come in runs so that walks run out; pages
// ending within the first 20 rows are tried as one statement first on PostgreSQL, which runs out too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Executor, write } from '../../src/db/index.ts';
import { EXCEPT_WALK, rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { TASK_STATUSES } from '../../src/definitions/catalogue.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { useRankSizes } from '../helpers/rank.ts';
import { useSettings } from '../helpers/settings.ts';

/** The tasks holding none of `without`, newest first, read from the records themselves. */
async function naive(db: Executor, ws: string, without: readonly string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('records')
    .select(['id', 'fields'])
    .where('workspace_id', '=', ws)
    .where('kind', '=', 'task')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.filter((r) => !without.includes((JSON.parse(r.fields) as { $status: string }).$status)).map((r) => r.id);
}

async function page(t: TestApp, s: Seeded, query: string): Promise<{ totalCount: number; ids: string[] }> {
  const r = await call(t, s.secret, 'GET', `/v1/tasks?${query}`);
  assert.equal(r.statusCode, 200, r.body);
  const got = r.json<{ totalCount: number; data: { id: string }[] }>();
  return { totalCount: got.totalCount, ids: got.data.map((x) => x.id) };
}

/** Every negation of one or two statuses, at offsets through and past the end, against both oracles. */
async function checkNegations(t: TestApp, s: Seeded): Promise<void> {
  await rankUpkeepSettled();
  const negations = [...TASK_STATUSES.map((x) => [x]), ['TODO', 'COMPLETE'], ['IN_PROGRESS', 'CANCELLED', 'TODO']];
  for (const without of negations) {
    const want = await naive(t.deps.db.kysely, s.workspaceId, without);
    const filter = without.map((x) => `$status[-equal]=${x}`).join('&');
    // Every third offset with pages of 3, so that some page spans each run.
    const sweep = Array.from({ length: Math.ceil(want.length / 3) }, (_, i) => [3, i * 3] as const);
    const ends = [0, 1, 5, Math.floor(want.length / 2), Math.max(0, want.length - 8), want.length - 1, want.length, want.length + 4].map(
      (o) => [7, o] as const,
    );
    for (const [limit, offset] of [...sweep, ...ends]) {
      if (offset < 0) continue;
      const at = `${filter}&limit=${limit}&offset=${offset}`;
      const ranked = await page(t, s, at);
      assert.equal(ranked.totalCount, want.length, `${at}: totalCount`);
      assert.deepEqual(ranked.ids, want.slice(offset, offset + limit), at);
      assert.deepEqual(await page(t, s, `${at}&$title[-equal]=no-such-title`), ranked, `${at}: the unranked plan`);
    }
  }
}

eachDialect('negated ranked values of tasks', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 }, fold: 6 });
  useSettings(EXCEPT_WALK, { within: 3, unit: 1, first: 20 });
  test('pages without one or more statuses are exact through creates, status changes, trash and restore', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids: string[] = [];
    // Runs between the others: 20 of the four in turn, 30 TODO, 20 COMPLETE, 20 alternating.
    const statusOf = (i: number) => (i < 20 ? TASK_STATUSES[i % 4] : i < 50 ? 'TODO' : i < 70 ? 'COMPLETE' : TASK_STATUSES[i % 2]);
    for (let i = 0; i < 90; i++) {
      const body = { fields: { $title: `T${i}`, $status: statusOf(i) }, relationships: { $assignedTo: s.userId } };
      const r = await call(t, s.secret, 'POST', '/v1/tasks', body);
      assert.equal(r.statusCode, 200, r.body);
      ids.push(r.json().id);
    }
    await checkNegations(t, s);
    for (const [i, id] of ids.entries()) {
      if (i % 3 !== 0) continue;
      const r = await call(t, s.secret, 'POST', `/v1/tasks/${id}`, { fields: { $status: TASK_STATUSES[(i + 1) % 4] } });
      assert.equal(r.statusCode, 200, r.body);
    }
    await checkNegations(t, s);
    const trashed = ids.filter((_, i) => i % 4 === 1 || (i >= 60 && i < 75));
    for (const id of trashed) assert.equal((await call(t, s.secret, 'DELETE', `/v1/tasks/${id}`)).statusCode, 200);
    await checkNegations(t, s);
    const db = t.deps.db.kysely;
    for (const id of trashed.slice(0, 12)) await write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }));
    await checkNegations(t, s);
  });

  test('a workspace without tasks, and a status no task holds', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    assert.deepEqual(await page(t, s, '$status[-equal]=TODO'), { totalCount: 0, ids: [] });
    for (let i = 0; i < 5; i++)
      await call(t, s.secret, 'POST', '/v1/tasks', { fields: { $title: `T${i}`, $status: 'TODO' }, relationships: { $assignedTo: s.userId } });
    assert.deepEqual(await page(t, s, '$status[-equal]=TODO&offset=2'), { totalCount: 0, ids: [] });
    const all = await naive(t.deps.db.kysely, s.workspaceId, []);
    assert.deepEqual(await page(t, s, '$status[-equal]=CANCELLED&limit=2&offset=1'), { totalCount: 5, ids: all.slice(1, 3) });
  });
});
