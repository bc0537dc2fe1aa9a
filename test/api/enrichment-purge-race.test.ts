// A purge of a record while a run of it writes its end (docs/enrichment.md, docs/trash.md §Purge),
// on PostgreSQL: the run's write holds its run, and the purge, which erases the runs before the
// events, waits for it there; the end's event is then committed, and erased by the purge's next
// statement. No event names the purged record, and its run is gone. (SQLite has one writer: the
// purge runs before or after the write, as test/api/enrichment-purge.test.ts covers.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  sql,
  type UnknownRow,
} from 'kysely';
import { write } from '../../src/db/index.ts';
import { executeRun } from '../../src/enrichment/execute.ts';
import { claimRuns } from '../../src/enrichment/outcome.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { purge } from '../../src/trash/purge.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';

/** Whether a backend of the test's database waits for a lock in a statement on the runs, within 10 s. */
async function purgeWaitsOnRuns(t: TestApp): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    const r = await sql`select 1 from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query ilike '%enrichment_runs%'`.execute(t.deps.db.kysely);
    if (r.rows.length > 0) return true;
    await sleep(50);
  }
  return false;
}

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`a purge while a run writes its end [${dialect}]`, () => {
    test('the purge waits for the run, then erases its run and the event of its end', async () => {
      const t = await buildTestApp(dialect, { env: { ENRICH_ALLOW_PRIVATE: 'true' } });
      try {
        const s = await seedWorkspace(t);
        const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: ['https://acme.test'] } })).json();
        const started = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json();
        assert.equal(started.status, 'started', JSON.stringify(started));
        const runId = started.enrichmentRun.id as string;
        const [row] = (await claimRuns(t.deps.db.kysely, { token: 'w', leaseMs: 60_000, limit: 100, maxAttempts: 3, at: new Date().toISOString() })).filter(
          (r) => r.id === runId,
        );
        assert.ok(row, 'the run is claimed');
        // In the trash, the record is neither live nor purged: the run's write ends it, with its event.
        assert.equal((await call(t, s.secret, 'DELETE', `/v1/accounts/${acc.id}`)).statusCode, 200);

        // Once the write has read its run as held (locked), the purge starts, and the write goes on
        // when the purge waits on the runs (or has ended).
        let purging: Promise<unknown> | undefined;
        let waited = false;
        const stall: KyselyPlugin = {
          transformQuery: (args: PluginTransformQueryArgs): RootOperationNode => args.node,
          async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
            const [r] = args.result.rows;
            if (purging === undefined && args.result.rows.length === 1 && r && Object.keys(r).join() === 'id' && r.id === runId) {
              purging = write(t.deps.db.kysely, (tx) => purge(operatorCtx(tx, s.workspaceId), { ids: [acc.id] }));
              purging.catch(() => {});
              waited = await Promise.race([purgeWaitsOnRuns(t), purging.then(() => false)]);
            }
            return args.result;
          },
        };
        await executeRun(t.deps.db.kysely.withPlugin(stall), row, 'w', { providers: [], userAgent: 'test', allowPrivate: true, timeoutMs: 60_000 });
        assert.ok(purging, 'the write read its run');
        assert.ok(waited, 'the purge waits for the write');
        await purging;

        const events = await t.deps.db.kysely.selectFrom('events').select('body').where('workspace_id', '=', s.workspaceId).execute();
        assert.deepEqual(
          events.filter((e) => e.body.includes(acc.id)).map((e) => (JSON.parse(e.body) as { type: string }).type),
          [],
          'no event names the purged record',
        );
        assert.equal((await call(t, s.secret, 'GET', `/v1/enrichmentRun/${runId}`)).statusCode, 404);
      } finally {
        await t.close();
      }
    });
  });
