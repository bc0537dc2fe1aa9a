// An endpoint's failing streak ends when nothing is left failing for it (docs/events.md
// §Delivery): on a success, or once its failing deliveries are all given up or erased with their
// event (a record purged from the trash). Before, a streak whose only failing delivery was given
// up, or later erased, stayed open (`failing_since` kept), so that one failure of the endpoint much
// later, its first in a long time, disabled it at once, and `list` showed it failing meanwhile. A
// replay is no success (docs/events.md §Webhooks): it enables a disabled endpoint, its streak
// afresh, and leaves a failing one failing since the same time; before, it reset the streak, so
// that a replay run again and again kept a dead endpoint from ever being disabled.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { operatorCtx } from '../../src/lib/context.ts';
import { claimDue, release } from '../../src/webhooks/claim-repository.ts';
import { failed, settleDelivered } from '../../src/webhooks/repository.ts';
import type { DeliveryRow } from '../../src/webhooks/repository.ts';
import { addWebhook, listWebhooks } from '../../src/webhooks/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { rolodex as cli } from '../helpers/cli.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const DISABLE_AFTER_MS = 1500;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

for (const dialect of testDialects()) {
  describe(`a failing streak whose failing deliveries are given up [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      await sql`insert into workspaces (id, name, created_at) values ('wsp_1', 'W', '2026-01-01T00:00:00.000Z')`.execute(tdb.db.kysely);
    });
    after(() => tdb.drop());

    /**
     * Endpoint `sub`, failing since a moment ago (another delivery succeeded before that), with
     * one leased delivery whose first failure is older than the limit, plus `others` deliveries
     * that failed too and wait for their retry.
     */
    async function endpoint(sub: string, others: number): Promise<DeliveryRow> {
      const db = tdb.db.kysely;
      await db
        .insertInto('webhook_subscriptions')
        .values({
          id: sub,
          workspace_id: 'wsp_1',
          url: 'http://127.0.0.1:9/',
          secret: 'whsec_x',
          all_events: 1,
          created_at: ago(60_000),
          failing_since: ago(300),
          last_error: 'HTTP 500',
          disabled_at: null,
        })
        .execute();
      const row = (i: number, lease: string | null, firstFailed: string) => ({
        id: `evt_${sub}_${i}:${sub}`,
        subscription_id: sub,
        event_id: `evt_${sub}_${i}`,
        event_seq: i + 1,
        object_id: `acc_${sub}_${i}`,
        next_attempt_at: lease === null ? ago(-60_000) : ago(-5000),
        lease_owner: lease,
        attempts: 3,
        last_error: 'HTTP 500',
        first_failed_at: firstFailed,
        parked: 0,
      });
      await db
        .insertInto('webhook_deliveries')
        .values([row(0, 't', ago(10_000)), ...Array.from({ length: others }, (_, i) => row(i + 1, null, ago(200)))])
        .execute();
      return await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', `evt_${sub}_0:${sub}`).executeTakeFirstOrThrow();
    }
    const input = { delayMs: 1000, error: 'HTTP 500', disableAfterMs: DISABLE_AFTER_MS };
    const subscription = (id: string) => tdb.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    test('the only failing delivery given up ends the streak: a failure much later is the first of a new one', async () => {
      const db = tdb.db.kysely;
      const given = await endpoint('whk_alone', 0);
      assert.equal(await failed(db, given, 't', input), 'given_up');
      assert.equal((await subscription('whk_alone')).failing_since, null, 'nothing is left failing: the endpoint is not failing');
      // Longer than the limit after the streak began, the endpoint fails once more.
      await new Promise((r) => setTimeout(r, DISABLE_AFTER_MS));
      await db
        .insertInto('webhook_deliveries')
        .values({ ...given, id: 'evt_late:whk_alone', event_id: 'evt_late', event_seq: 99, lease_owner: 't', first_failed_at: null, last_error: null })
        .execute();
      const late = (await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', 'evt_late:whk_alone').executeTakeFirstOrThrow()) as DeliveryRow;
      assert.equal(await failed(db, late, 't', input), 'retry', 'one failure does not disable the endpoint');
      const after = await subscription('whk_alone');
      assert.equal(after.disabled_at, null);
      assert.ok(after.failing_since !== null && Date.parse(after.failing_since) > Date.now() - DISABLE_AFTER_MS, 'a new streak');
    });

    test('a failed row settled with nothing to send (its event erased meanwhile) ends the streak as a give-up does', async () => {
      const db = tdb.db.kysely;
      const row = await endpoint('whk_gone', 0);
      const settled = await settleDelivered(db, 't', [{ id: row.id, subscription_id: 'whk_gone', delivered: false }]);
      assert.deepEqual([...settled], [row.id], 'the row leaves the outbox');
      const ended = await subscription('whk_gone');
      assert.equal(ended.failing_since, null, 'nothing is left failing: the endpoint is not failing');
      assert.equal(ended.last_error, 'HTTP 500', 'no answer came: the last error stays until a success');
      const more = await endpoint('whk_gone_more', 1);
      const before = (await subscription('whk_gone_more')).failing_since;
      await settleDelivered(db, 't', [{ id: more.id, subscription_id: 'whk_gone_more', delivered: false }]);
      assert.equal((await subscription('whk_gone_more')).failing_since, before, 'a delivery still fails: the endpoint is failing');
      const next = await endpoint('whk_answers', 0);
      await settleDelivered(db, 't', [{ id: next.id, subscription_id: 'whk_answers', delivered: true }]);
      assert.equal((await subscription('whk_answers')).failing_since, null, 'a 2xx ends the streak');
    });

    test('a success after a streak a give-up ended clears the last error', async () => {
      const db = tdb.db.kysely;
      const given = await endpoint('whk_cleared', 0);
      assert.equal(await failed(db, given, 't', input), 'given_up');
      const ended = await subscription('whk_cleared');
      assert.equal(ended.failing_since, null, 'nothing is left failing');
      assert.equal(ended.last_error, 'HTTP 500', 'the last error stays until a success');
      await db
        .insertInto('webhook_deliveries')
        .values({ ...given, id: 'evt_ok:whk_cleared', event_id: 'evt_ok', event_seq: 98, lease_owner: 't', first_failed_at: null, last_error: null })
        .execute();
      await settleDelivered(db, 't', [{ id: 'evt_ok:whk_cleared', subscription_id: 'whk_cleared', delivered: true }]);
      assert.equal((await subscription('whk_cleared')).last_error, null, '`list --json` shows no last error once a delivery succeeded');
    });

    test('while another delivery is still failing, the streak goes on', async () => {
      const db = tdb.db.kysely;
      const given = await endpoint('whk_more', 1);
      const before = (await subscription('whk_more')).failing_since;
      assert.equal(await failed(db, given, 't', input), 'given_up');
      assert.equal((await subscription('whk_more')).failing_since, before, 'a delivery still fails: the endpoint is failing');
    });
  });
}

/**
 * Through the API and the CLI: the endpoint's deliveries are claimed and fail as the dispatcher
 * claims and records them (no endpoint is called), the limit `WEBHOOK_DISABLE_AFTER_MS` short.
 */
eachDialect(
  'a failing streak, an erasure and a replay',
  (ctx) => {
    const db = () => ctx().deps.db.kysely;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    let round = 0;
    /** Claims the due deliveries and fails those of `sub` once, giving the others back: the outcomes. */
    async function failOnce(sub: string): Promise<string[]> {
      const token = `round-${++round}`;
      const rows = await claimDue(db(), { token, leaseMs: 60_000, limit: 8, probes: 4 });
      const outcomes: string[] = [];
      for (const row of rows.filter((r) => r.subscription_id === sub))
        outcomes.push(String(await failed(db(), row, token, { delayMs: 60_000, error: 'HTTP 500', disableAfterMs: ctx().config.webhooks.disableAfterMs })));
      await release(
        db(),
        token,
        rows.filter((r) => r.subscription_id !== sub).map((r) => r.id),
      );
      return outcomes;
    }
    async function subscribed(s: Seeded): Promise<string> {
      const url = 'http://127.0.0.1:9/';
      return (await addWebhook(operatorCtx(db(), s.workspaceId), { url, events: ['account.created'], allowPrivate: true })).id;
    }
    const status = async (s: Seeded) => {
      const [w] = await listWebhooks(db(), { workspaceId: s.workspaceId });
      return { status: w!.status, failingSince: w!.failingSince, lastError: w!.lastError };
    };
    const account = async (s: Seeded, name: string): Promise<string> =>
      (await call(ctx(), s.secret, 'POST', '/v1/accounts', { fields: { $name: name } })).json().id;
    async function erase(s: Seeded, id: string): Promise<void> {
      assert.equal((await call(ctx(), s.secret, 'DELETE', `/v1/accounts/${id}`)).statusCode, 200);
      const purged = await cli(ctx(), ['trash', 'purge', '--workspace', s.workspaceId, id, '--json']);
      assert.equal(purged.code, 0, purged.err);
    }
    const recent = (at: string | null) => at !== null && Date.parse(at) > Date.now() - DISABLE_AFTER_MS;

    test('the only failing delivery erased with its event ends the streak: a failure much later is the first of a new one', async () => {
      const s = await seedWorkspace(ctx());
      const sub = await subscribed(s);
      const gone = await account(s, 'Gone');
      assert.deepEqual(await failOnce(sub), ['retry']);
      assert.equal((await status(s)).status, 'failing');
      await erase(s, gone);
      assert.deepEqual(await status(s), { status: 'active', failingSince: null, lastError: 'HTTP 500' }, 'nothing is left failing; the last error stays');
      // Longer than the limit after the streak began, the endpoint fails once more.
      await sleep(DISABLE_AFTER_MS);
      await account(s, 'Later');
      assert.deepEqual(await failOnce(sub), ['retry'], 'one failure does not disable the endpoint');
      const later = await status(s);
      assert.equal(later.status, 'failing');
      assert.ok(recent(later.failingSince), 'a new streak');
    });

    test('an erased failing delivery leaves the streak while another delivery still fails', async () => {
      const s = await seedWorkspace(ctx());
      const sub = await subscribed(s);
      const gone = await account(s, 'Gone');
      await account(s, 'Kept');
      assert.deepEqual(await failOnce(sub), ['retry', 'retry']);
      const before = await status(s);
      await erase(s, gone);
      assert.deepEqual(await status(s), before, 'a delivery still fails: the endpoint is failing since the same time');
    });

    test('a replay leaves a failing endpoint failing since the same time; one of a disabled endpoint starts afresh', async () => {
      const s = await seedWorkspace(ctx());
      const sub = await subscribed(s);
      await account(s, 'First');
      assert.deepEqual(await failOnce(sub), ['retry']);
      const before = await status(s);
      const replay = async () => {
        const r = await cli(ctx(), ['webhook', 'replay', sub, '--since', '2000-01-01T00:00:00Z', '--json']);
        assert.equal(r.code, 0, r.err);
        return JSON.parse(r.out).queued as number;
      };
      await replay();
      assert.deepEqual(await status(s), before, 'no answer came: the endpoint is failing as before');
      // Replayed again and again, as from cron, the endpoint still fails for the limit: disabled.
      await sleep(DISABLE_AFTER_MS);
      await replay();
      await account(s, 'Second');
      assert.deepEqual(await failOnce(sub), ['disabled']);
      assert.equal((await status(s)).status, 'disabled');
      // Enabled by a replay, its next failure is the first of a new streak.
      assert.equal(await replay(), 2);
      assert.deepEqual(await status(s), { status: 'active', failingSince: null, lastError: 'HTTP 500' });
      assert.deepEqual(await failOnce(sub), ['retry', 'retry'], 'one failure does not disable the endpoint again');
      const after = await status(s);
      assert.equal(after.status, 'failing');
      assert.ok(recent(after.failingSince), 'a new streak');
    });
  },
  { env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DISPATCH: 'false', WEBHOOK_DISABLE_AFTER_MS: String(DISABLE_AFTER_MS) } },
);
