// Two deliveries to one endpoint that fail at the same moment (docs/events.md §Delivery): the first
// failure parks the endpoint's rows, and neither failure waits on the other's rows. On PostgreSQL
// each failure locks the endpoint first and parks only the rows nobody holds, so both are recorded;
// before, each locked its own row and then waited for the other's, a deadlock PostgreSQL broke by
// failing one of them, and that row stayed leased until its lease ran out. Taking turns on the
// endpoint, a failure that comes while another ends the endpoint's failing streak (its last
// failing row given up) reads the streak as ended: it begins a new one and parks the rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { failed } from '../../src/webhooks/repository.ts';
import type { DeliveryRow } from '../../src/webhooks/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { waiterOf } from '../helpers/pg-locks.ts';

for (const dialect of testDialects()) {
  describe(`two failures of one endpoint at once [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
    });
    after(() => tdb.drop());

    test('are both recorded, and the endpoint is failing with its rows parked', async () => {
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('wsp_1', 'W', '2026-01-01T00:00:00.000Z')`.execute(db);
      await sql`insert into webhook_subscriptions (id, workspace_id, url, secret, all_events, created_at)
        values ('whk_1', 'wsp_1', 'http://127.0.0.1:9/', 'whsec_x', 1, '2026-01-01T00:00:00.000Z')`.execute(db);
      const rows = Array.from(
        { length: 6 },
        (_, i) => sql`(${`evt_${i}:whk_1`}, 'whk_1', ${`evt_${i}`}, ${i + 1}, ${`acc_${i}`}, '2999-01-01T00:00:00.000Z', 't', 1)`,
      );
      await sql`insert into webhook_deliveries (id, subscription_id, event_id, event_seq, object_id, next_attempt_at, lease_owner, attempts)
        values ${sql.join(rows)}`.execute(db);
      const leased = await db.selectFrom('webhook_deliveries').selectAll().orderBy('event_seq').execute();
      const input = { delayMs: 1000, error: 'HTTP 500', disableAfterMs: 600_000 };
      for (let round = 0; round < 3; round++) {
        const [a, b] = [leased[2 * round] as DeliveryRow, leased[2 * round + 1] as DeliveryRow];
        const outcomes = await Promise.all([failed(db, a, 't', input), failed(db, b, 't', input)]);
        assert.deepEqual(outcomes, ['retry', 'retry'], `round ${round}`);
        await sql`update webhook_subscriptions set failing_since = null`.execute(db);
        await sql`update webhook_deliveries set parked = 0`.execute(db);
      }
      const after = await db.selectFrom('webhook_deliveries').select(['lease_owner']).execute();
      assert.deepEqual(
        after.map((r) => r.lease_owner),
        Array.from({ length: 6 }, () => null),
      );
    });

    // SQLite has one writer: a failure never overlaps another.
    if (dialect === 'postgres')
      test('a failure while another ends the failing streak begins a new one and parks the rows', async () => {
        const db = tdb.db.kysely;
        const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
        await sql`insert into workspaces (id, name, created_at) values ('wsp_2', 'W', '2026-01-01T00:00:00.000Z')`.execute(db);
        // Failing for a minute; its only failing row first failed two days ago, so its failure
        // gives it up and ends the streak.
        await sql`insert into webhook_subscriptions (id, workspace_id, url, secret, all_events, created_at, failing_since)
          values ('whk_2', 'wsp_2', 'http://127.0.0.1:9/', 'whsec_x', 1, '2026-01-01T00:00:00.000Z', ${ago(60_000)})`.execute(db);
        const rows = Array.from({ length: 5 }, (_, i) => {
          const [owner, firstFailed] = i === 0 ? ['a', ago(2 * 86_400_000)] : i === 1 ? ['b', null] : [null, null];
          return sql`(${`evt_${i}:whk_2`}, 'whk_2', ${`evt_${i}`}, ${i + 1}, ${`acc_${i}`}, '2999-01-01T00:00:00.000Z', ${owner}, 1, ${firstFailed})`;
        });
        await sql`insert into webhook_deliveries (id, subscription_id, event_id, event_seq, object_id, next_attempt_at, lease_owner, attempts, first_failed_at)
          values ${sql.join(rows)}`.execute(db);
        const [a, b] = (await db
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('subscription_id', '=', 'whk_2')
          .orderBy('event_seq')
          .limit(2)
          .execute()) as [DeliveryRow, DeliveryRow];
        const input = { delayMs: 1000, error: 'HTTP 500', disableAfterMs: 3_600_000 };
        // A's failure, holding the endpoint, waits here for its row; B's is sent meanwhile and is
        // let go once it waits for A's (or, reading the endpoint unlocked, once it ended).
        let first!: ReturnType<typeof failed>;
        let second!: ReturnType<typeof failed>;
        await write(db, async (tx) => {
          await sql`select id from webhook_deliveries where id = ${a.id} for update`.execute(tx);
          first = failed(db, a, 'a', input);
          const holder = await waiterOf(tx);
          assert.ok(holder, "A's failure waits for its row");
          second = failed(db, b, 'b', input);
          let ended = false;
          void second.finally(() => (ended = true));
          for (let i = 0; i < 200 && !ended; i++) {
            await sql`select pg_stat_clear_snapshot()`.execute(tx);
            const waiting = await sql`select 1 from pg_stat_activity a where ${holder.pid}::int = any(pg_blocking_pids(a.pid))`.execute(tx);
            if (waiting.rows.length > 0) break;
            await wait(50);
          }
        });
        assert.equal(await first, 'given_up');
        assert.equal(await second, 'retry');
        const sub = await db.selectFrom('webhook_subscriptions').select('failing_since').where('id', '=', 'whk_2').executeTakeFirstOrThrow();
        assert.notEqual(sub.failing_since, null, 'B began a new streak');
        const left = await db.selectFrom('webhook_deliveries').select(['id', 'parked']).where('subscription_id', '=', 'whk_2').orderBy('event_seq').execute();
        assert.deepEqual(
          left.map((r) => [r.id, Number(r.parked)]),
          [1, 2, 3, 4].map((i) => [`evt_${i}:whk_2`, 1]),
          "the endpoint's rows are parked",
        );
      });
  });
}
