// Ranked values (docs/filtering.md §Ranked values): every write of a task keeps the ranked set of
// each `$status` value exact, and a `$status` page at any offset is the naive page of the tasks
// holding that value. Tiny buckets make leaves split and merge within a few dozen tasks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import type { Executor } from '../../src/db/index.ts';
import { rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { TASK_STATUSES } from '../../src/definitions/catalogue.ts';
import { IMPORT_CHUNK, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { FACETS } from '../../src/records/index/facets.ts';
import { BULK_LOAD } from '../../src/records/import.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { checkEntries, checkPages, useRankSizes } from '../helpers/rank.ts';
import { keepSettings } from '../helpers/settings.ts';
import { write } from '../../src/db/write.ts';

/** The chunk of an atomic import as the code sets it. */
const ATOMIC = IMPORT_CHUNK.atomic;

/** The tasks of the workspace holding each status, newest first, read from the records themselves. */
async function naive(db: Executor, ws: string): Promise<Map<string, string[]>> {
  const rows = await db
    .selectFrom('records')
    .select(['id', 'fields'])
    .where('workspace_id', '=', ws)
    .where('kind', '=', 'task')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  const out = new Map<string, string[]>(TASK_STATUSES.map((s) => [s, []]));
  for (const r of rows) out.get((JSON.parse(r.fields) as { $status: string }).$status)!.push(r.id);
  return out;
}

/** Every status's set is exact, and its filtered pages through the API are the naive ones. */
async function checkStatuses(t: TestApp, s: Seeded): Promise<void> {
  await rankUpkeepSettled();
  const db = t.deps.db.kysely;
  const want = await naive(db, s.workspaceId);
  for (const status of TASK_STATUSES) {
    const values = [s.workspaceId, 'task', '$status', status.toLowerCase()];
    assert.equal((await checkEntries(db, FACETS, values)).total, want.get(status)!.length, `${status}: the set counts its tasks`);
    await checkPages(db, FACETS, values, { limit: 4 });
    const ids = want.get(status)!;
    for (const offset of [0, Math.floor(ids.length / 2), Math.max(0, ids.length - 3), ids.length + 1]) {
      const r = await call(t, s.secret, 'GET', `/v1/tasks?$status=${status}&limit=3&offset=${offset}`);
      assert.equal(r.statusCode, 200, r.body);
      const page = r.json<{ totalCount: number; data: { id: string }[] }>();
      assert.equal(page.totalCount, ids.length, `${status} offset ${offset}: totalCount`);
      assert.deepEqual(
        page.data.map((x) => x.id),
        ids.slice(offset, offset + 3),
        `${status} offset ${offset}`,
      );
    }
  }
}

eachDialect('ranked values of tasks', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 }, fold: 6 });
  keepSettings(BULK_LOAD, IMPORT_CHUNK);
  test('creates, status changes, trash and restore keep every status set exact', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const body = { fields: { $title: `T${i}`, $status: TASK_STATUSES[i % 3] }, relationships: { $assignedTo: s.userId } };
      const r = await call(t, s.secret, 'POST', '/v1/tasks', body);
      assert.equal(r.statusCode, 200, r.body);
      ids.push(r.json().id);
    }
    await checkStatuses(t, s);
    // Moved from one set to another, and a write that leaves the status as it was.
    for (const [i, id] of ids.entries()) {
      if (i % 4 === 3) continue;
      const fields = i % 5 === 0 ? { $title: `renamed ${i}` } : { $status: TASK_STATUSES[(i + 1) % 4] };
      const r = await call(t, s.secret, 'POST', `/v1/tasks/${id}`, { fields });
      assert.equal(r.statusCode, 200, r.body);
    }
    await checkStatuses(t, s);
    const trashed = ids.filter((_, i) => i % 3 === 1);
    for (const id of trashed) assert.equal((await call(t, s.secret, 'DELETE', `/v1/tasks/${id}`)).statusCode, 200);
    await checkStatuses(t, s);
    const db = t.deps.db.kysely;
    for (const id of trashed.slice(0, 10)) await write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }));
    await checkStatuses(t, s);
    // Every facet row is a value-index row of the same record, and the other way round.
    const stray = await sql<{ n: number }>`select count(*) as n from record_facets f where not exists (select 1 from record_values v
      where v.record_id = f.record_id and v.field = f.field and v.value_text = f.value_text)`.execute(db);
    assert.equal(Number(stray.rows[0]?.n), 0);
    const missing = await sql<{ n: number }>`select count(*) as n from record_values v where v.object_type = 'task' and v.field = '$status'
      and not exists (select 1 from record_facets f where f.record_id = v.record_id and f.field = v.field and f.value_text = v.value_text)`.execute(db);
    assert.equal(Number(missing.rows[0]?.n), 0);
  });

  test('concurrent creates and status changes leave every status set exact', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const create = (i: number) =>
      call(t, s.secret, 'POST', '/v1/tasks', { fields: { $title: `C${i}`, $status: TASK_STATUSES[i % 4] }, relationships: { $assignedTo: s.userId } });
    const ids = (await Promise.all(Array.from({ length: 40 }, (_, i) => create(i)))).map((r) => {
      assert.equal(r.statusCode, 200, r.body);
      return r.json().id as string;
    });
    // Each task moved twice at once (one of the two wins), beside more creates and deletes.
    const writes = ids.flatMap((id, i) => [
      call(t, s.secret, 'POST', `/v1/tasks/${id}`, { fields: { $status: TASK_STATUSES[(i + 1) % 4] } }),
      i % 5 === 0
        ? call(t, s.secret, 'DELETE', `/v1/tasks/${id}`)
        : call(t, s.secret, 'POST', `/v1/tasks/${id}`, { fields: { $status: TASK_STATUSES[(i + 2) % 4] } }),
      create(100 + i),
    ]);
    for (const r of await Promise.all(writes)) assert.ok([200, 404].includes(r.statusCode), r.body);
    await checkStatuses(t, s);
  });

  for (const [bulk, chunk] of [
    [true, ATOMIC],
    [true, 16],
    [false, ATOMIC],
  ] as const)
    test(`an import ${bulk ? 'in bulk (the type had no tasks)' : 'of new and existing tasks'}, ${chunk} tasks a chunk, ranks their statuses`, async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      Object.assign(BULK_LOAD, bulk ? { min: 1, share: 0 } : { min: Infinity });
      IMPORT_CHUNK.atomic = chunk;
      const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
      const lines = (n: number, shift: number) => [
        { object: 'user', externalId: 'u-1', email: `imp${Math.random().toString(36).slice(2)}@acme.test`, role: 'member' },
        ...Array.from({ length: n }, (_, i) => ({
          object: 'task',
          externalId: `t-${i}`,
          fields: { $title: { value: `Imported ${i}` }, $status: { value: TASK_STATUSES[(i + shift) % 4] } },
          relationships: { $assignedTo: { values: ['u-1'] } },
        })),
      ];
      const text = (n: number, shift: number, from = 0) =>
        lines(n, shift)
          .slice(from)
          .map((l) => JSON.stringify(l))
          .join('\n');
      await runImport(op, { kinds: importKinds(), text: text(50, 0) });
      await checkStatuses(t, s);
      Object.assign(BULK_LOAD, { min: Infinity });
      // Again, with every status moved and more tasks: existing ones updated, new ones created.
      await runImport(op, { kinds: importKinds(), text: text(70, 1, 1) });
      await checkStatuses(t, s);
    });
});
