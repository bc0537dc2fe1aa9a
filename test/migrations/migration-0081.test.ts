// Migration 0081_delivery_queue (docs/events.md §Delivery, docs/deploy.md §Migrations): from a
// database at 0080 whose outbox holds one endpoint's backlog ahead of another endpoint's rows, a
// claim afterwards takes the other endpoint's rows beside part of the backlog, on both databases;
// the index the older claim walked is gone, and releases before it run beside it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { write } from '../../src/db/write.ts';
import { claimDue } from '../../src/webhooks/claim-repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-01-01T00:00:00.000Z';
const BACKLOG = 500;

for (const dialect of testDialects()) {
  describe(`migration 0081_delivery_queue [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0081' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('wsp_1', 'W', ${AT})`.execute(db);
      for (const id of ['whk_busy', 'whk_other'])
        await sql`insert into webhook_subscriptions (id, workspace_id, url, secret, all_events, created_at)
          values (${id}, 'wsp_1', 'http://127.0.0.1:9/', 'whsec_x', 1, ${AT})`.execute(db);
      const rows = Array.from({ length: BACKLOG + 2 }, (_, i) => {
        const n = i + 1;
        const sub = n <= BACKLOG ? 'whk_busy' : 'whk_other';
        return sql`(${`evt_${n}:${sub}`}, ${sub}, ${`evt_${n}`}, ${n}, ${`con_${n}`}, ${AT}, 0)`;
      });
      await sql`insert into webhook_deliveries (id, subscription_id, event_id, event_seq, object_id, next_attempt_at, attempts)
        values ${sql.join(rows)}`.execute(db);
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test("a claim takes the other endpoint's rows beside the backlog", async () => {
      const db = tdb.db.kysely;
      const rows = await write(db, (tx) => claimDue(tx, { token: 't', leaseMs: 60_000, limit: 8 }));
      assert.deepEqual(
        rows.map((r) => Number(r.event_seq)),
        [1, BACKLOG + 1, 2, BACKLOG + 2, 3, 4, 5, 6],
      );
    });

    test('the older walk index is gone, and older releases run beside it', async () => {
      const db = tdb.db.kysely;
      const indexes =
        dialect === 'postgres'
          ? await sql<{
              name: string;
            }>`select indexname as name from pg_indexes where tablename = 'webhook_deliveries' and schemaname = current_schema()`.execute(db)
          : await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'webhook_deliveries'`.execute(db);
      const names = indexes.rows.map((r) => r.name);
      assert.ok(names.includes('webhook_deliveries_queue'), names.join(', '));
      assert.ok(!names.includes('webhook_deliveries_walk'), names.join(', '));
      const listed = await sql<{ name: string }>`select name from migrations_run_beside`.execute(db);
      assert.ok(listed.rows.some((r) => r.name === '0081_delivery_queue'));
    });
  });
}
