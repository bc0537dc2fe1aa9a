// ENRICHMENT=on-create (docs/enrichment.md §Runs), on both databases: the runners record the run of
// every account and contact created through the API from the change log, after the create, with
// trigger "creation"; an import records none; two runners record one run per record; a POST that
// comes first keeps its run; a switch from manual starts from the log's end; servers of other modes
// leave the cursor alone; a stale cursor restarts at the log's end; the sweeper keeps the events a
// live cursor has not passed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { lastEventSeq, purgeEvents } from '../../src/changes/repository.ts';
import { CURSOR_BEAT_MS, CURSOR_STALE_MS, prepareCreationLog } from '../../src/enrichment/creation.ts';
import { filesEnv } from '../../src/files/service.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import type { EnrichmentProvider } from '../../src/enrichment/provider.ts';
import { cursorSeq } from '../../src/enrichment/repository.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { readCreationLog, startTestRunner } from '../helpers/enrichment.ts';
import { importObjects } from '../helpers/lists-fixtures.ts';

// Looks an account up by its website, as the website provider does, and finds nothing.
const failing: EnrichmentProvider = {
  name: 'failing',
  fills: () => ['$linkedIn'],
  canLookUp: (subject) => subject.entityType === 'account' && Array.isArray(subject.fields.$website) && subject.fields.$website.length > 0,
  lookUp: () => Promise.reject(new Error('nothing here')),
};

const runner = (t: TestApp) => startTestRunner(t, [failing]);

const runsOf = (t: TestApp, ids: readonly string[]) =>
  t.deps.db.kysely.selectFrom('enrichment_runs').select(['id', 'entity_id', 'trigger', 'status']).where('entity_id', 'in', ids).execute();

const TRIES = 3000;

const readAll = (t: TestApp) => readCreationLog(t, [failing]);

async function createAccounts(t: TestApp, secret: string, n: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(
      (await call(t, secret, 'POST', '/v1/accounts', { fields: { $name: `${prefix}${i}`, $website: [`https://${prefix}${i}.example.test`] } })).json().id,
    );
  return ids;
}

eachDialect(
  'enrichment on-create, from the change log',
  (ctx) => {
    test('a created account or contact gets a run with trigger creation once a runner has read the log', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const [acc] = await createAccounts(t, s.secret, 1, 'site');
      const con = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['ann@site0.example.test'] } })).json().id;
      const plain = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'No site' } })).json().id;
      assert.deepEqual(await runsOf(t, [acc!, con, plain]), [], 'the create writes no run');
      const r = runner(t);
      try {
        for (let i = 0; i < TRIES && (await runsOf(t, [acc!, con])).length < 2; i++) await sleep(10);
      } finally {
        await r.stop();
      }
      const runs = await runsOf(t, [acc!, con, plain]);
      assert.deepEqual(
        runs.map((x) => [x.entity_id, x.trigger]).sort(),
        [
          [acc, 'creation'],
          [con, 'creation'],
        ].sort(),
      );
      const run = (await call(t, s.secret, 'GET', `/v1/enrichmentRun/${runs.find((x) => x.entity_id === acc)!.id}`)).json();
      assert.equal(run.trigger, 'creation');
      assert.equal(run.entityId, acc);
    });

    test('an import records no run', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await importObjects(t, s.workspaceId, [
        {
          object: 'account',
          externalId: 'a1',
          fields: { $name: { value: 'Imported', valueType: 'TEXT' }, $website: { value: ['https://imported.example.test'] } },
        },
        { object: 'contact', externalId: 'c1', fields: { $email: { value: ['bo@imported.example.test'], valueType: 'EMAIL' } } },
      ]);
      const imported = (await t.deps.db.kysely.selectFrom('records').select('id').where('workspace_id', '=', s.workspaceId).execute()).map((r) => r.id);
      assert.equal(imported.length, 2);
      const [api] = await createAccounts(t, s.secret, 1, 'api');
      await readAll(t);
      assert.deepEqual((await runsOf(t, imported)).length, 0);
      assert.deepEqual((await runsOf(t, [api!])).length, 1);
    });

    test('two runners record one run per record', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const ids = await createAccounts(t, s.secret, 30, 'two');
      const a = runner(t);
      const b = runner(t);
      try {
        for (let i = 0; i < TRIES; i++) {
          const runs = await runsOf(t, ids);
          if (
            runs.length >= ids.length &&
            runs.every((x) => x.status === 'failed') &&
            (await cursorSeq(t.deps.db.kysely)) === (await lastEventSeq(t.deps.db.kysely))
          )
            break;
          await sleep(10);
        }
        // Both go on reading the log meanwhile: nothing is recorded twice.
        await sleep(100);
      } finally {
        await a.stop();
        await b.stop();
      }
      const runs = await runsOf(t, ids);
      assert.equal(runs.length, ids.length, 'one run per record');
      assert.deepEqual(new Set(runs.map((x) => x.entity_id)), new Set(ids));
    });

    test('events read again (a cursor set back) record no second run, even once the first ended', async () => {
      const t = ctx();
      const db = t.deps.db.kysely;
      const s = await seedWorkspace(t);
      await readAll(t);
      const from = await cursorSeq(db);
      const ids = await createAccounts(t, s.secret, 3, 'again');
      await readAll(t);
      await db.updateTable('enrichment_runs').set({ status: 'completed' }).where('entity_id', 'in', ids).execute();
      await db.updateTable('enrichment_cursor').set({ seq: from! }).execute();
      await readAll(t);
      assert.equal((await runsOf(t, ids)).length, 3);
    });

    test('a POST before the runner keeps its run; the record gets no second one', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const [acc] = await createAccounts(t, s.secret, 1, 'first');
      const started = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc}`)).json();
      assert.equal(started.status, 'started');
      await readAll(t);
      assert.deepEqual(
        (await runsOf(t, [acc!])).map((x) => x.trigger),
        ['manual'],
      );
    });

    test('a switch from manual starts from the log’s end', async () => {
      const t = ctx();
      const db = t.deps.db.kysely;
      const s = await seedWorkspace(t);
      await db.deleteFrom('enrichment_cursor').execute();
      const before = await createAccounts(t, s.secret, 2, 'manual');
      await prepareCreationLog(db, 'on-create');
      const after = await createAccounts(t, s.secret, 1, 'eager');
      await readAll(t);
      assert.equal((await runsOf(t, before)).length, 0, 'no run for what was created under manual');
      assert.equal((await runsOf(t, after)).length, 1);
    });

    test('a server started with manual or off leaves the cursor to the on-create instances sharing the database', async () => {
      const t = ctx();
      const db = t.deps.db.kysely;
      const s = await seedWorkspace(t);
      await readAll(t);
      const ids = await createAccounts(t, s.secret, 2, 'rolling');
      const at = await cursorSeq(db);
      await prepareCreationLog(db, 'manual');
      await prepareCreationLog(db, 'off');
      assert.equal(await cursorSeq(db), at);
      await readAll(t);
      assert.equal((await runsOf(t, ids)).length, 2, 'the runs of the creates before the other servers started');
    });

    test('a runner that finds no cursor (dropped by an earlier version started with manual) opens it at the log’s end', async () => {
      const t = ctx();
      const db = t.deps.db.kysely;
      const s = await seedWorkspace(t);
      await db.deleteFrom('enrichment_cursor').execute();
      const [acc] = await createAccounts(t, s.secret, 1, 'dropped');
      const end = await lastEventSeq(db);
      const r = runner(t);
      try {
        for (let i = 0; i < TRIES && (await cursorSeq(db)) === undefined; i++) await sleep(10);
      } finally {
        await r.stop();
      }
      // At the log's end as it opened: past every event before the runner started, and the runner's
      // own rounds may append after it (the events of the runs of earlier tests that end).
      const opened = await cursorSeq(db);
      assert.ok(opened !== undefined && opened >= end && opened <= (await lastEventSeq(db)), `opened at the log’s end: ${opened}, the log ended at ${end}`);
      const [later] = await createAccounts(t, s.secret, 1, 'reopened');
      await readAll(t);
      assert.equal((await runsOf(t, [acc!])).length, 0);
      assert.equal((await runsOf(t, [later!])).length, 1);
    });

    test('an idle runner touches its cursor; a stale one is restarted at the log’s end by an on-create server', async () => {
      const t = ctx();
      const db = t.deps.db.kysely;
      const s = await seedWorkspace(t);
      await prepareCreationLog(db, 'on-create');
      await readAll(t);
      const seq = await cursorSeq(db);
      const old = new Date(Date.now() - CURSOR_BEAT_MS - 1000).toISOString();
      await db.updateTable('enrichment_cursor').set({ updated_at: old }).execute();
      await readAll(t);
      const beat = (await db.selectFrom('enrichment_cursor').select(['seq', 'updated_at']).executeTakeFirstOrThrow()).updated_at;
      assert.ok(beat > old, 'touched by a round with nothing to read');
      await prepareCreationLog(db, 'on-create');
      assert.equal(await cursorSeq(db), seq, 'a live cursor is kept');
      await db
        .updateTable('enrichment_cursor')
        .set({ updated_at: new Date(Date.now() - CURSOR_STALE_MS - 1000).toISOString() })
        .execute();
      const missed = await createAccounts(t, s.secret, 2, 'stale');
      await prepareCreationLog(db, 'on-create');
      assert.equal(await cursorSeq(db), await lastEventSeq(db), 'a stale cursor restarts at the log’s end');
      await readAll(t);
      assert.equal((await runsOf(t, missed)).length, 0, 'no run for what was created with no runner alive');
    });

    test('the sweeper keeps the events past a live cursor and ignores a stale one', async () => {
      const t = ctx();
      const db = t.deps.db.kysely;
      const s = await seedWorkspace(t);
      await prepareCreationLog(db, 'on-create');
      await readAll(t);
      // The sweep runs two days on, with a retention of one: every event is old enough to go.
      const now = Date.now() + 2 * 86_400_000;
      const sweep = () => sweepOnce({ db, now, files: filesEnv(t.config, t.deps.blobs) }, { eventRetentionDays: 1 });
      const touched = (ms: number) =>
        db
          .updateTable('enrichment_cursor')
          .set({ updated_at: new Date(now - ms).toISOString() })
          .execute();
      await touched(0);
      await sweep();
      await createAccounts(t, s.secret, 2, 'swept');
      await touched(CURSOR_STALE_MS - 60_000);
      assert.equal((await sweep()).eventsPurged, 0, 'unread events stay while a runner keeps the cursor');
      await touched(CURSOR_STALE_MS + 60_000);
      assert.ok((await sweep()).eventsPurged >= 2, 'a stale cursor keeps nothing');
      // The next on-create server restarts it at the log's end, which may now lie below it.
      await prepareCreationLog(db, 'on-create', now);
      assert.equal(await cursorSeq(db), await lastEventSeq(db));
      await touched(now - Date.now());
    });

    test('the events past the cursor outlive their retention', async () => {
      const t = ctx();
      const db = t.deps.db.kysely;
      const s = await seedWorkspace(t);
      const future = new Date(Date.now() + 86_400_000).toISOString();
      await readAll(t);
      while ((await purgeEvents(db, future, 1000, await cursorSeq(db))) > 0);
      const ids = await createAccounts(t, s.secret, 2, 'kept');
      assert.equal(await purgeEvents(db, future, 1000, await cursorSeq(db)), 0);
      await readAll(t);
      assert.equal((await runsOf(t, ids)).length, 2);
      assert.ok((await purgeEvents(db, future, 1000, await cursorSeq(db))) >= 2);
    });
  },
  { env: { ENRICHMENT: 'on-create', ENRICH_POLL_MS: '20' } },
);
