// Two deliveries to one endpoint that fail at the same moment (docs/events.md §Delivery): the first
// failure parks the endpoint's rows, and neither failure waits on the other's rows. On PostgreSQL
// each failure locks the endpoint first and parks only the rows nobody holds, so both are recorded;
// before, each locked its own row and then waited for the other's, a deadlock PostgreSQL broke by
// failing one of them, and that row stayed leased until its lease ran out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { failed } from '../../src/webhooks/repository.ts';
import type { DeliveryRow } from '../../src/webhooks/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

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
  });
}
