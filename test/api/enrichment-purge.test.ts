// Enrichment runs beside the trash and beside each other (docs/enrichment.md, docs/trash.md §Purge),
// on both databases: a purge erases the record's runs and the events of their ends, and a run under
// way then writes nothing and appends no event naming the record; a run recorded from a read made
// before the purge does the same; a contact's run whose matched account goes to the trash between
// its lookup and its write leaves the link out and writes the rest; and a POST whose record's run
// ends between its insert and its answer answers that run, never `skipped`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { write } from '../../src/db/index.ts';
import { executeRun } from '../../src/enrichment/execute.ts';
import { claimRuns } from '../../src/enrichment/outcome.ts';
import type { EnrichmentProvider } from '../../src/enrichment/provider.ts';
import { PROVIDERS } from '../../src/enrichment/providers.ts';
import * as repo from '../../src/enrichment/repository.ts';
import { requestRun } from '../../src/enrichment/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { purge as purgeTrash } from '../../src/trash/purge.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex as cli } from '../helpers/cli.ts';

const ENV = { ENRICH_ALLOW_PRIVATE: 'true' };

/** Claims the due runs under `token` and returns the one of id `runId`. */
async function claim(t: TestApp, token: string, runId: string): Promise<repo.RunRow> {
  const rows = await claimRuns(t.deps.db.kysely, { token, leaseMs: 60_000, limit: 100, maxAttempts: 3, at: new Date().toISOString() });
  const row = rows.find((r) => r.id === runId);
  assert.ok(row, `run ${runId} claimed`);
  return row;
}

const execEnv = (providers: readonly EnrichmentProvider[]) => ({ providers, userAgent: 'test', allowPrivate: true, timeoutMs: 60_000 });

/** The events of the workspace that name `id` anywhere. */
async function eventsNaming(t: TestApp, workspaceId: string, id: string): Promise<string[]> {
  const rows = await t.deps.db.kysely.selectFrom('events').select('body').where('workspace_id', '=', workspaceId).execute();
  return rows.filter((r) => r.body.includes(id)).map((r) => (JSON.parse(r.body) as { type: string }).type);
}

async function runsOf(t: TestApp, id: string): Promise<number> {
  return (await t.deps.db.kysely.selectFrom('enrichment_runs').select('id').where('entity_id', '=', id).execute()).length;
}

/** Deletes the account and purges it: with `rolodex trash purge`, or in a transaction of the test's own. */
async function purge(t: TestApp, s: Seeded, id: string, how: 'cli' | 'direct' = 'cli'): Promise<Record<string, number>> {
  const deleted = await call(t, s.secret, 'DELETE', `/v1/accounts/${id}`);
  assert.equal(deleted.statusCode, 200, deleted.body);
  if (how === 'direct') return { ...(await write(t.deps.db.kysely, (tx) => purgeTrash(operatorCtx(tx, s.workspaceId), { ids: [id] }))) };
  const purged = await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, id, '--json']);
  assert.equal(purged.code, 0, purged.err);
  return JSON.parse(purged.out) as Record<string, number>;
}

eachDialect(
  'enrichment runs beside the trash',
  (ctx) => {
    test('a purge erases the runs of the record and their events; a run under way then writes nothing', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: ['https://acme.test'] } })).json();
      const start = async (body?: unknown) => {
        const answer = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`, body)).json();
        assert.equal(answer.status, 'started', JSON.stringify(answer));
        return answer.enrichmentRun.id as string;
      };
      const quick: EnrichmentProvider = {
        name: 'quick',
        fills: () => ['$linkedIn', '$twitter'],
        canLookUp: () => true,
        lookUp: async () => ({ $linkedIn: 'https://www.linkedin.com/company/acme' }),
      };
      const first = await start();
      assert.equal(await executeRun(t.deps.db.kysely, await claim(t, 'first', first), 'first', execEnv([quick])), 'completed');
      assert.ok((await eventsNaming(t, s.workspaceId, acc.id)).includes('enrichment_run.completed'));

      // The second run's lookup is under way while the record is deleted and purged.
      const second = await start({ fields: ['$twitter'] });
      const looking = Promise.withResolvers<void>();
      const answer = Promise.withResolvers<Record<string, unknown>>();
      const gated: EnrichmentProvider = {
        ...quick,
        lookUp: () => (looking.resolve(), answer.promise),
      };
      const running = executeRun(t.deps.db.kysely, await claim(t, 'second', second), 'second', execEnv([gated]));
      await looking.promise;
      const purged = await purge(t, s, acc.id);
      assert.equal(purged.enrichmentRuns, 2, JSON.stringify(purged));
      answer.resolve({ $twitter: 'https://x.com/acme' });
      assert.equal(await running, null, 'the run no longer exists: its end writes nothing');

      assert.equal(await runsOf(t, acc.id), 0);
      assert.deepEqual(await eventsNaming(t, s.workspaceId, acc.id), [], 'no event names the purged record');
      assert.equal((await call(t, s.secret, 'GET', `/v1/enrichmentRun/${second}`)).statusCode, 404);
    });

    test('a run recorded from a read made before its record was purged ends with nothing, and no event names it', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Gone', $website: ['https://gone.test'] } })).json();
      await purge(t, s, acc.id, 'direct');
      // As an on-create runner records it from the create's event read before the purge erased it.
      const at = new Date().toISOString();
      const runId = `enr_${Date.now().toString(36)}purged`;
      await repo.insertRun(t.deps.db.kysely, {
        id: runId,
        workspace_id: s.workspaceId,
        entity_type: 'account',
        entity_id: acc.id,
        status: 'queued',
        trigger: 'creation',
        target_fields: '["$linkedIn"]',
        named_fields: '[]',
        created_at: at,
        updated_at: at,
        started_at: null,
        completed_at: null,
        due_at: at,
        lease_owner: null,
        attempts: 0,
        error: null,
      });
      assert.equal(await executeRun(t.deps.db.kysely, await claim(t, 'late', runId), 'late', execEnv(PROVIDERS)), null);
      assert.equal(await runsOf(t, acc.id), 0, 'the run of a purged record is erased');
      assert.deepEqual(await eventsNaming(t, s.workspaceId, acc.id), []);
    });

    test("a contact's run whose account goes to the trash after the lookup leaves the link out and writes the rest", async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Anvils', $website: ['https://anvils.test'] } })).json();
      const con = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['ann@anvils.test'] } })).json();
      const started = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/contacts/${con.id}`)).json();
      assert.equal(started.status, 'started', JSON.stringify(started));
      const runId = started.enrichmentRun.id as string;
      // A provider of contacts' photos as well, so that the run has something besides the link.
      await t.deps.db.kysely.updateTable('enrichment_runs').set({ target_fields: '["$account","$profilePhotoUrl"]' }).where('id', '=', runId).execute();
      const photos: EnrichmentProvider = {
        name: 'photos',
        fills: (type) => (type === 'contact' ? ['$profilePhotoUrl'] : []),
        canLookUp: () => true,
        lookUp: async () => ({ $profilePhotoUrl: 'https://anvils.test/ann.png' }),
      };
      // The account is deleted once the run's lookup has found it, before the run writes.
      let armed = true;
      const late: KyselyPlugin = {
        transformQuery: (args: PluginTransformQueryArgs): RootOperationNode => args.node,
        async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
          const [row] = args.result.rows;
          if (armed && args.result.rows.length === 1 && row && Object.keys(row).join() === 'id' && row.id === acc.id) {
            armed = false;
            const deleted = await call(t, s.secret, 'DELETE', `/v1/accounts/${acc.id}`);
            assert.equal(deleted.statusCode, 200, deleted.body);
          }
          return args.result;
        },
      };
      const row = await claim(t, 'link', runId);
      assert.equal(await executeRun(t.deps.db.kysely.withPlugin(late), row, 'link', execEnv([photos])), 'completed');
      assert.equal(armed, false, 'the lookup found the account');
      const after = (await call(t, s.secret, 'GET', `/v1/contacts/${con.id}`)).json();
      assert.deepEqual(after.relationships.$account.values, []);
      assert.equal(after.fields.$profilePhotoUrl.value, 'https://anvils.test/ann.png');
      assert.equal((await call(t, s.secret, 'GET', `/v1/enrichmentRun/${runId}`)).json().status, 'completed');
    });

    test('a POST whose record has a run in flight answers it, even when it ends right after the insert', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const db = t.deps.db.kysely;
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Race', $website: ['https://race.test'] } })).json();
      const first = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json();
      assert.equal(first.status, 'started');
      const runId = first.enrichmentRun.id as string;
      // Right after the second request's insert, another connection ends the run in flight; it is
      // given half a second (it may wait for the request's transaction).
      const inserts = new Set<unknown>();
      let ending: Promise<unknown> | undefined;
      const between: KyselyPlugin = {
        transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
          if (args.node.kind === 'InsertQueryNode') inserts.add(args.queryId);
          return args.node;
        },
        async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
          if (ending === undefined && inserts.has(args.queryId)) {
            const at = new Date().toISOString();
            ending = db.updateTable('enrichment_runs').set({ status: 'completed', completed_at: at, updated_at: at }).where('id', '=', runId).execute();
            await Promise.race([ending, sleep(500)]);
          }
          return args.result;
        },
      };
      const answer = await write(db.withPlugin(between), (tx) =>
        requestRun(operatorCtx(tx, s.workspaceId), { mode: 'manual', providers: PROVIDERS }, { entityType: 'account', entityId: acc.id, trigger: 'manual' }),
      );
      assert.ok(ending, 'the run was ended after the insert');
      await ending;
      assert.equal(answer.status, 'already_running', JSON.stringify(answer));
      assert.equal(answer.enrichmentRun?.id, runId);
    });
  },
  { env: ENV },
);
