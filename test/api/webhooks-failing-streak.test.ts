// An endpoint's failing streak ends when nothing is left failing for it (docs/events.md
// §Delivery): on a success, or once its failing deliveries are all given up. Before, a streak
// whose only failing delivery was given up stayed open (`failing_since` kept), so that one
// failure of the endpoint much later, its first in a long time, disabled it at once, and `list`
// showed it failing meanwhile.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { failed, settleDelivered } from '../../src/webhooks/repository.ts';
import type { DeliveryRow } from '../../src/webhooks/repository.ts';
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

    test('a row settled with nothing to send (its event erased meanwhile) leaves the streak; a delivery ends it', async () => {
      const db = tdb.db.kysely;
      const row = await endpoint('whk_gone', 0);
      const before = (await subscription('whk_gone')).failing_since;
      const settled = await settleDelivered(db, 't', [{ id: row.id, subscription_id: 'whk_gone', delivered: false }]);
      assert.deepEqual([...settled], [row.id], 'the row leaves the outbox');
      const kept = await subscription('whk_gone');
      assert.equal(kept.failing_since, before, 'no answer came: the endpoint is failing as before');
      assert.equal(kept.last_error, 'HTTP 500');
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
