// An atomic import's late locks beside an API write that takes several of the same sets
// (docs/pages.md §Long transactions; docs/design.md §Database, "The order of locks"). The import
// creates a task of status TODO in its first chunk and one of status COMPLETE in its second, so
// it touches the TODO set before the COMPLETE set; an update of a task from COMPLETE to TODO
// takes both sets in `lockOrder`, COMPLETE ("complete" as stored) first. `takeLateLocks` takes
// its sets in that same order, so neither write waits for the other in a circle: both succeed,
// none runs again.
//
// On PostgreSQL the test's transaction holds the TODO set's lock, as a writer of the set does:
// the import reaches its late locks and waits for it, the update is sent and waits for the
// import, then the lock is let go. Had the import taken its sets in the order it touched them, it
// would hold TODO while the update held COMPLETE, each waiting for the other, until PostgreSQL
// cancelled one (the update, run again, or the import, which fails). SQLite has one writer: the
// import runs, then the update.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { TASK_STATUSES } from '../../src/definitions/catalogue.ts';
import { lockPartition, write } from '../../src/db/index.ts';
import { rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { IMPORT_CHUNK, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { FACETS } from '../../src/records/index/facets.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { waiterOf } from '../helpers/pg-locks.ts';
import { checkEntries, checkPages } from '../helpers/rank.ts';

const RERUN = 'the transaction was cancelled by a conflict with another; running it again';
const task = (i: number, status: string) => ({
  object: 'task',
  externalId: `t-${i}`,
  fields: { $title: { value: `Imported ${i}` }, $status: { value: status } },
  relationships: { $assignedTo: { values: ['u-1'] } },
});
const ndjson = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n');

for (const dialect of testDialects())
  describe(`an atomic import's late locks beside an update that takes two of its sets [${dialect}]`, () => {
    let app: TestApp | undefined;
    const t = () => app as TestApp;
    const savedChunk = { ...IMPORT_CHUNK };
    before(async () => {
      app = await buildTestApp(dialect);
      // One task per chunk: the import touches the sets in its lines' order.
      IMPORT_CHUNK.atomic = 1;
      IMPORT_CHUNK.batched = 1;
    });
    after(async () => {
      Object.assign(IMPORT_CHUNK, savedChunk);
      await app?.close();
    });

    test('the import and the update both succeed, nothing runs again, every set counts its rows', async () => {
      const s = await seedWorkspace(t());
      const db = t().deps.db.kysely;
      const ws = s.workspaceId;
      const user = { object: 'user', externalId: 'u-1', email: `imp${ws}@acme.test`, role: 'member' };
      await runImport(operatorCtx(db, ws), { kinds: importKinds(), text: ndjson([user, task(0, 'COMPLETE')]) });
      const updated = (await db.selectFrom('records').select('id').where('workspace_id', '=', ws).where('external_id', '=', 't-0').executeTakeFirstOrThrow())
        .id;
      const from = t().logs().length;

      const importing = () =>
        runImport(operatorCtx(db, ws), { kinds: importKinds(), text: ndjson([task(1, 'TODO'), task(2, 'COMPLETE')]), commit: 'atomic' }).then(
          () => undefined,
          (err: unknown) => err,
        );
      const update = () => call(t(), s.secret, 'POST', `/v1/tasks/${updated}`, { fields: { $status: 'TODO' } });
      let imported: unknown;
      let answer: { statusCode: number; body: string };
      if (dialect === 'postgres') {
        let one!: Promise<unknown>;
        let two!: ReturnType<typeof update>;
        await write(db, async (tx) => {
          await lockPartition(tx, FACETS, [ws, 'task', '$status', 'todo']);
          await sql`select 1`.execute(tx);
          one = importing();
          const waiting = await waiterOf(tx);
          assert.ok(waiting, 'the import waits for the TODO set at its late locks');
          two = update();
          assert.ok(await waiterOf(tx, waiting.pid), 'the update waits for the import');
        });
        [imported, answer] = await Promise.all([one, two]);
      } else {
        imported = await importing();
        answer = await update();
      }
      assert.equal(imported, undefined, String(imported));
      assert.equal(answer.statusCode, 200, answer.body);
      const reruns = t()
        .logs()
        .slice(from)
        .split('\n')
        .filter((l) => l.includes(RERUN) || l.includes('40P01') || l.includes('deadlock'));
      assert.deepEqual(reruns, []);

      await rankUpkeepSettled();
      assert.equal((await checkEntries(db, RECORDS, [ws, 'task'])).total, 3);
      await checkPages(db, RECORDS, [ws, 'task'], { limit: 2 });
      const want: Record<string, number> = { TODO: 2, COMPLETE: 1 };
      for (const status of TASK_STATUSES) {
        await checkEntries(db, FACETS, [ws, 'task', '$status', status.toLowerCase()]);
        const r = await call(t(), s.secret, 'GET', `/v1/tasks?$status=${status}&limit=1`);
        assert.equal(r.json().totalCount, want[status] ?? 0, status);
      }
    });
  });
