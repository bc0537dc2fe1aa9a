// A webhook dispatcher's claim walks the outbox in event order through event_seq's index and stops
// once it has its rows (src/webhooks/claim-repository.ts `dueInOrder`): its cost follows the rows it
// claims, not the backlog behind them. Without the index every claim read and sorted every due
// delivery, and a backlog of thousands of events was delivered at a fraction of the rate.
// PostgreSQL: rows read, from the transaction's own statistics (pg_stat_xact_user_tables);
// SQLite: the plan of the selection (no sort of the due rows).
// A failing endpoint's rows are parked, out of the walk's index (`webhook_deliveries_walk`): a
// claim behind its backlog reads about the rows it claims, where it stepped over every one.
// The probe of a failing endpoint (`probes`) reads its due rows by due time, not the rows whose
// retry is backed off, however many: without `webhook_deliveries_probe` SQLite walked the
// endpoint's rows by object and read each backed-off one, every claim.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { claimDue, dueInOrder, probes } from '../../src/webhooks/claim-repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { sqlitePlan } from '../helpers/plans.ts';
import { write } from '../../src/db/write.ts';
import type { Tx } from '../../src/db/types.ts';

const BACKLOG = 5000;
const LIMIT = 16;

/** Rows of webhook_deliveries read so far in this transaction (PostgreSQL). */
const rowsRead = async (tx: Tx) =>
  Number(
    (
      await sql<{ n: string }>`select coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) as n
        from pg_stat_xact_user_tables where relname = 'webhook_deliveries' and schemaname = current_schema()`.execute(tx)
    ).rows[0]?.n ?? 0,
  );

/** Inserts `count` deliveries, one event each of as many objects; `row(n)` says where the n-th goes. */
async function seedDeliveries(
  db: TestDb['db']['kysely'],
  count: number,
  row: (n: number) => { sub: string; due?: string; attempts?: number; parked?: number },
): Promise<void> {
  for (let from = 0; from < count; from += 500) {
    const rows = Array.from({ length: Math.min(500, count - from) }, (_, i) => {
      const n = from + i + 1;
      const { sub, due = '2026-01-01T00:00:00.000Z', attempts = 0, parked = 0 } = row(n);
      return sql`(${`evt_${n}:${sub}`}, ${sub}, ${`evt_${n}`}, ${n}, ${`con_${n}`}, ${due}, ${attempts}, ${parked})`;
    });
    await sql`insert into webhook_deliveries (id, subscription_id, event_id, event_seq, object_id, next_attempt_at, attempts, parked)
      values ${sql.join(rows)}`.execute(db);
  }
}

/** A workspace and its subscriptions, each failing since the given time or healthy (null). */
async function seedSubscriptions(db: TestDb['db']['kysely'], subs: Record<string, string | null>): Promise<void> {
  await sql`insert into workspaces (id, name, created_at) values ('wsp_1', 'W', '2026-01-01T00:00:00.000Z')`.execute(db);
  for (const [id, failingSince] of Object.entries(subs))
    await sql`insert into webhook_subscriptions (id, workspace_id, url, secret, all_events, created_at, failing_since)
      values (${id}, 'wsp_1', 'http://127.0.0.1:9/', ${`whsec_${id}`}, 1, '2026-01-01T00:00:00.000Z', ${failingSince})`.execute(db);
}

for (const dialect of testDialects()) {
  describe(`a webhook claim with a backlog of ${BACKLOG} deliveries [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      await seedDeliveries(db, BACKLOG, () => ({ sub: 'whk_1' }));
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    if (dialect === 'postgres')
      test(`claiming ${LIMIT} rows reads about ${LIMIT} rows, in event order`, async () => {
        await write(tdb.db.kysely, async (tx) => {
          const before = await rowsRead(tx);
          const rows = await claimDue(tx, { token: 't', leaseMs: 60_000, limit: LIMIT });
          const n = (await rowsRead(tx)) - before;
          assert.deepEqual(
            rows.map((r) => Number(r.event_seq)),
            Array.from({ length: LIMIT }, (_, i) => i + 1),
          );
          assert.ok(n <= 5 * LIMIT, `the claim read ${n} rows of a backlog of ${BACKLOG}`);
        });
      });
    else
      test('the selection follows event_seq and sorts nothing', async () => {
        const db = tdb.db.kysely;
        const q = dueInOrder(db, LIMIT).compile();
        const plan = await sqlitePlan(db, q.sql, q.parameters);
        assert.ok(
          plan.some((d) => d.includes('webhook_deliveries_walk')),
          plan.join('\n'),
        );
        assert.ok(!plan.some((d) => d.includes('TEMP B-TREE')), plan.join('\n'));
        const rows = await claimDue(db, { token: 't', leaseMs: 60_000, limit: LIMIT });
        assert.equal(rows.length, LIMIT);
      });
  });
}

for (const dialect of testDialects()) {
  describe(`the probe of a failing endpoint with ${BACKLOG} deliveries backed off [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      await seedSubscriptions(db, { whk_f: '2026-01-01T00:00:00.000Z' });
      // One event each of BACKLOG objects, every retry but the newest three's backed off.
      await seedDeliveries(db, BACKLOG, (n) => ({ sub: 'whk_f', attempts: 1, due: n > BACKLOG - 3 ? undefined : '2999-01-01T00:00:00.000Z' }));
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    test('reads the due rows only', async () => {
      if (dialect === 'postgres')
        await write(tdb.db.kysely, async (tx) => {
          const before = await rowsRead(tx);
          const rows = await probes(tx, 1).execute();
          const n = (await rowsRead(tx)) - before;
          assert.equal(rows.length, 1);
          assert.ok(n <= 20, `the probe read ${n} rows of a backlog of ${BACKLOG}`);
        });
      else {
        const db = tdb.db.kysely;
        const q = probes(db, 1).compile();
        const plan = await sqlitePlan(db, q.sql, q.parameters);
        assert.ok(
          plan.some((d) => d.includes('webhook_deliveries_probe')),
          plan.join('\n'),
        );
        assert.equal((await probes(db, 1).execute()).length, 1);
      }
    });
  });
}

for (const dialect of testDialects()) {
  describe(`a claim behind a failing endpoint's ${BACKLOG} parked deliveries [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      await seedSubscriptions(db, { whk_f: '2026-01-01T00:00:00.000Z', whk_h: null });
      // The failing endpoint's backlog, all due, older than the healthy endpoint's LIMIT rows.
      await seedDeliveries(db, BACKLOG + LIMIT, (n) => (n <= BACKLOG ? { sub: 'whk_f', parked: 1 } : { sub: 'whk_h' }));
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    test(`claims the healthy endpoint's ${LIMIT} rows and one probe, reading about as many`, async () => {
      const claim = async (tx: Tx) => claimDue(tx, { token: 't', leaseMs: 60_000, limit: LIMIT, probes: 1 });
      if (dialect === 'postgres')
        await write(tdb.db.kysely, async (tx) => {
          const before = await rowsRead(tx);
          const rows = await claim(tx);
          const n = (await rowsRead(tx)) - before;
          assert.equal(rows.filter((r) => r.subscription_id === 'whk_h').length, LIMIT);
          assert.equal(rows.filter((r) => r.subscription_id === 'whk_f').length, 1);
          assert.ok(n <= 5 * LIMIT + 20, `the claim read ${n} rows behind a failing backlog of ${BACKLOG}`);
        });
      else {
        const db = tdb.db.kysely;
        const q = dueInOrder(db, LIMIT).compile();
        const plan = await sqlitePlan(db, q.sql, q.parameters);
        assert.ok(
          plan.some((d) => d.includes('webhook_deliveries_walk')),
          plan.join('\n'),
        );
        const rows = await write(db, claim);
        assert.equal(rows.filter((r) => r.subscription_id === 'whk_h').length, LIMIT);
        assert.equal(rows.filter((r) => r.subscription_id === 'whk_f').length, 1);
      }
    });
  });
}
