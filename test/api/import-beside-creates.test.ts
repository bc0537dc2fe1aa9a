// Creates through the API into the very listing an import is writing (docs/import.md §Sharing the
// database). The import stops after writing its contacts and before it commits, while the API
// creates records of the same type (tasks, whose statuses are ranked sets of their own): the creates
// answer at once (on PostgreSQL the atomic import takes the listing's lock only just before
// COMMIT; on SQLite the batched import commits chunk by chunk), and afterwards every ranked set of
// the type (the listing, each select value's) counts exactly the rows it holds. A unique value
// that the API takes meanwhile is held by one record only, whichever came first.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { TASK_STATUSES } from '../../src/definitions/catalogue.ts';
import { rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { LATE_KEYS } from '../../src/db/rank/late.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { IMPORT_CHUNK, ImportFailed, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { BULK_LOAD } from '../../src/records/import.ts';
import { FACETS } from '../../src/records/index/facets.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { checkEntries, checkPages, timeout, useRankSizes } from '../helpers/rank.ts';
import { useSettings } from '../helpers/settings.ts';

const DEFINITIONS = [
  { object: 'definition', externalId: 'd-code', definition: 'field', objectType: 'contact', key: 'code', label: 'Code', valueType: 'TEXT', unique: true },
];

const contact = (i: number) => ({
  object: 'contact',
  externalId: `c${i}`,
  fields: {
    $name: { value: { firstName: 'Ann', lastName: `Lee${i}` }, valueType: 'FULL_NAME' },
    code: { value: `k-${i}`, valueType: 'TEXT' },
  },
});

/** A kind written after the contacts, whose work outside the transaction waits for `during` to end. */
function pauseKind(during: () => Promise<void>): ImportKind {
  return {
    object: 'pause',
    check: () => ({}),
    lookup: async () => new Map(),
    prepare: async () => {
      await during();
      return { undo: async () => {} };
    },
    upsert: async () => {},
  };
}

async function importWithPause(t: TestApp, s: Seeded, objects: object[], during: () => Promise<void>) {
  const text = [...objects, { object: 'pause', externalId: 'p' }].map((o) => JSON.stringify(o)).join('\n');
  // On PostgreSQL the import is one transaction, open during the pause; SQLite has one writer, and
  // an import beside a server commits chunk by chunk (the CLI's default there).
  const commit = t.dialect === 'postgres' ? 'atomic' : 'batched';
  return runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: [...importKinds(), pauseKind(during)], text, commit });
}

async function create(t: TestApp, s: Seeded, i: number, fields: Record<string, unknown> = {}) {
  const started = performance.now();
  const r = await Promise.race([
    call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Bo', lastName: `Api${i}` }, ...fields } }),
    timeout(5000),
  ]);
  return { r, ms: performance.now() - started };
}

/** The listing and every select value's set of the workspace's contacts count their rows, and page as the rows do. */
async function checkSets(t: TestApp, s: Seeded, type: 'task' | 'contact', total: number): Promise<void> {
  await rankUpkeepSettled();
  const db = t.deps.db.kysely;
  assert.equal((await checkEntries(db, RECORDS, [s.workspaceId, type])).total, total);
  await checkPages(db, RECORDS, [s.workspaceId, type], { limit: 7 });
  const facets = await db.selectFrom('record_facets').select(['field', 'value_text']).distinct().where('workspace_id', '=', s.workspaceId).execute();
  if (type === 'task') assert.ok(facets.length >= 4, 'every status has its set');
  for (const f of facets) {
    await checkEntries(db, FACETS, [s.workspaceId, type, f.field, f.value_text]);
    await checkPages(db, FACETS, [s.workspaceId, type, f.field, f.value_text], { limit: 7 });
  }
  const page = await call(t, s.secret, 'GET', `/v1/${type}s?limit=1`);
  assert.equal(page.json().totalCount, total);
}

eachDialect('import beside creates into the same listing', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 }, fold: 6 });
  useSettings(IMPORT_CHUNK, { atomic: 40, batched: 40 });
  // With the default budget of late keys, and with one so small that every partition is counted
  // again from its rows at the end instead (docs/pages.md §Long transactions).
  for (const budget of [LATE_KEYS.max, 30])
    test(`creates answer during the import, and every ranked set of the type counts exactly after it (${budget} late keys)`, async () => {
      const saved = LATE_KEYS.max;
      LATE_KEYS.max = budget;
      after(() => (LATE_KEYS.max = saved));
      const t = ctx();
      const s = await seedWorkspace(t);
      const task = (i: number, shift: number) => ({
        object: 'task',
        externalId: `t-${i}`,
        fields: { $title: { value: `Imported ${i}` }, $status: { value: TASK_STATUSES[(i + shift) % 4] } },
        relationships: { $assignedTo: { values: ['u-1'] } },
      });
      const user = { object: 'user', externalId: 'u-1', email: `imp${s.workspaceId}@acme.test`, role: 'member' };
      // Tasks that exist before: the import moves the status of half of them and creates 170.
      await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), {
        kinds: importKinds(),
        text: [user, ...Array.from({ length: 60 }, (_, i) => task(i, 0))].map((o) => JSON.stringify(o)).join('\n'),
      });
      const waits: number[] = [];
      const imported = await importWithPause(
        t,
        s,
        Array.from({ length: 200 }, (_, i) => task(i + 30, 1)),
        async () => {
          for (let i = 0; i < 12; i++) {
            const started = performance.now();
            const body = { fields: { $title: `Api ${i}`, $status: TASK_STATUSES[i % 4] }, relationships: { $assignedTo: s.userId } };
            const r = await Promise.race([call(t, s.secret, 'POST', '/v1/tasks', body), timeout(5000)]);
            assert.equal(r.statusCode, 200, r.body);
            waits.push(performance.now() - started);
          }
        },
      );
      assert.equal(imported.counts.task, 200);
      assert.equal(waits.length, 12);
      await checkSets(t, s, 'task', 60 + 170 + 12);
      for (const status of TASK_STATUSES) {
        const want =
          [...Array(30).keys()].filter((i) => TASK_STATUSES[i % 4] === status).length +
          [...Array(200).keys()].filter((i) => TASK_STATUSES[(i + 31) % 4] === status).length +
          [...Array(12).keys()].filter((i) => TASK_STATUSES[i % 4] === status).length;
        const r = await call(t, s.secret, 'GET', `/v1/tasks?$status=${status}&limit=1`);
        assert.equal(r.json().totalCount, want, status);
      }
    });

  test('a unique value the API takes while the import runs ends up held by one record, and the loser is told why', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds(), text: DEFINITIONS.map((o) => JSON.stringify(o)).join('\n') });
    let api: Awaited<ReturnType<typeof create>> | undefined;
    let failed: unknown;
    try {
      await importWithPause(
        t,
        s,
        Array.from({ length: 100 }, (_, i) => contact(i)),
        async () => {
          api = await create(t, s, 0, { code: 'K-77' });
        },
      );
    } catch (err) {
      failed = err;
    }
    const holders = await call(t, s.secret, 'GET', '/v1/contacts?code=k-77&limit=5');
    assert.equal(holders.statusCode, 200, holders.body);
    assert.equal(holders.json().totalCount, 1, 'one contact holds the value');
    // On PostgreSQL the import holds no lock of the listing until its end, so the API writes the
    // value first; on SQLite the import's chunks committed before the pause, so the API finds it taken.
    if (t.dialect === 'postgres') {
      assert.equal(api!.r.statusCode, 200, api!.r.body);
      // The API wrote it first: the import is refused whole, naming the line that gives it.
      assert.ok(failed instanceof ImportFailed, String(failed));
      assert.match(failed.message, /line 78: fields\.code\.value: "k-77": another contact holds it, written while this import ran; "code" is unique/);
      await checkSets(t, s, 'contact', 1);
    } else {
      // The import's chunk committed first: the API refuses the value as taken.
      assert.equal(api!.r.statusCode, 409, api!.r.body);
      assert.equal(failed, undefined);
      await checkSets(t, s, 'contact', 100);
    }
  });

  // A type without records when the import began is bulk-loaded (docs/import.md §Speed): its rows
  // are written without being counted, and its listing is counted at the end, from the run of its
  // keys on PostgreSQL (docs/pages.md §Long transactions, A run of keys) or from its rows.
  for (const budget of [LATE_KEYS.max, 30])
    test(`a bulk load: creates answer during the import, and every ranked set counts exactly after it (${budget} late keys)`, async () => {
      const saved = [LATE_KEYS.max, { ...BULK_LOAD }] as const;
      LATE_KEYS.max = budget;
      Object.assign(BULK_LOAD, { min: 1, share: 0 });
      after(() => {
        LATE_KEYS.max = saved[0];
        Object.assign(BULK_LOAD, saved[1]);
      });
      const t = ctx();
      const s = await seedWorkspace(t);
      const task = (i: number) => ({
        object: 'task',
        externalId: `t-${i}`,
        fields: { $title: { value: `Imported ${i}` }, $status: { value: TASK_STATUSES[i % 4] } },
        relationships: { $assignedTo: { values: ['u-1'] } },
      });
      const user = { object: 'user', externalId: 'u-1', email: `bulk${s.workspaceId}@acme.test`, role: 'member' };
      let created = 0;
      const imported = await importWithPause(t, s, [user, ...Array.from({ length: 200 }, (_, i) => task(i))], async () => {
        for (let i = 0; i < 12; i++) {
          const body = { fields: { $title: `Api ${i}`, $status: TASK_STATUSES[i % 4] }, relationships: { $assignedTo: s.userId } };
          const r = await Promise.race([call(t, s.secret, 'POST', '/v1/tasks', body), timeout(5000)]);
          assert.equal(r.statusCode, 200, r.body);
          created++;
        }
      });
      assert.equal(imported.counts.task, 200);
      assert.equal(created, 12);
      await checkSets(t, s, 'task', 200 + 12);
    });
});
