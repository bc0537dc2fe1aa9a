// A webhook dispatcher's claim shares its rows among the endpoints with due deliveries
// (src/webhooks/claim-repository.ts `dueShared`): it finds them by a skip scan of the index of the
// rows outside the parking (`webhook_deliveries_queue`) and walks each one's rows in event order
// through it, so its cost follows the endpoints and the rows it claims, not the backlog behind
// them. Without an index in event order every claim read and sorted every due delivery, and a
// backlog of thousands of events was delivered at a fraction of the rate; a claim that walked
// every endpoint's rows in one event order was filled by one endpoint's backlog.
// PostgreSQL: rows read, from the transaction's own statistics (pg_stat_xact_user_tables);
// SQLite: the plan of the selection (no scan of the outbox, no sort of the due rows).
// A failing endpoint's rows are parked, out of that index: a claim behind its backlog reads about
// the rows it claims, where it stepped over every one.
// The probe of a failing endpoint (`probes`) reads its due rows by due time, not the rows whose
// retry is backed off, however many: without `webhook_deliveries_probe` SQLite walked the
// endpoint's rows by object and read each backed-off one, every claim.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { claimDue, dueShared, probes } from '../../src/webhooks/claim-repository.ts';
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

/**
 * SQLite: the claim's selection reads the outbox by its indexes only, never scanning it, and each
 * endpoint's rows through `webhook_deliveries_queue`, in event order (not by due time, sorted).
 */
async function assertWalked(db: TestDb['db']['kysely']): Promise<void> {
  const q = dueShared(db, LIMIT).compile();
  const plan = await sqlitePlan(db, q.sql, q.parameters);
  const text = plan.join('\n');
  // c, d, q and o are the selection's names of webhook_deliveries; the others name its CTEs.
  assert.ok(!plan.some((d) => /\bSCAN [cdqo]\b/.test(d)), text);
  assert.ok(
    plan.some((d) => d.includes('SEARCH q USING COVERING INDEX webhook_deliveries_queue (subscription_id>?)')),
    text,
  );
  assert.ok(
    plan.some((d) => d.includes('SEARCH q USING INDEX webhook_deliveries_queue (subscription_id=? AND event_seq>?)')),
    text,
  );
  assert.ok(!plan.some((d) => d.includes('SEARCH q') && !d.includes('webhook_deliveries_queue')), text);
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
          assert.ok(n <= 6 * LIMIT, `the claim read ${n} rows of a backlog of ${BACKLOG}`);
        });
      });
    else
      test('the selection walks the index of the rows outside the parking and scans no table', async () => {
        const db = tdb.db.kysely;
        await assertWalked(db);
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
        await assertWalked(db);
        const rows = await write(db, claim);
        assert.equal(rows.filter((r) => r.subscription_id === 'whk_h').length, LIMIT);
        assert.equal(rows.filter((r) => r.subscription_id === 'whk_f').length, 1);
      }
    });
  });
}

for (const dialect of testDialects()) {
  describe(`a claim beside one endpoint's backlog of ${BACKLOG} deliveries [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      await seedSubscriptions(db, { whk_busy: null, whk_other: null });
      // The busy endpoint's backlog, all due, older than the other endpoint's three rows.
      await seedDeliveries(db, BACKLOG + 3, (n) => ({ sub: n <= BACKLOG ? 'whk_busy' : 'whk_other' }));
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    test(`claims the other endpoint's rows with ${LIMIT - 3} of the backlog, in turns, reading about as many`, async () => {
      const claim = async (tx: Tx) => claimDue(tx, { token: 't', leaseMs: 60_000, limit: LIMIT });
      const rows =
        dialect === 'postgres'
          ? await write(tdb.db.kysely, async (tx) => {
              const before = await rowsRead(tx);
              const claimed = await claim(tx);
              const n = (await rowsRead(tx)) - before;
              assert.ok(n <= 5 * LIMIT, `the claim read ${n} rows beside a backlog of ${BACKLOG}`);
              return claimed;
            })
          : (await assertWalked(tdb.db.kysely), await write(tdb.db.kysely, claim));
      // Each endpoint's first row, then each one's second, and so on, the older event first.
      assert.deepEqual(
        rows.map((r) => Number(r.event_seq)),
        [1, BACKLOG + 1, 2, BACKLOG + 2, 3, BACKLOG + 3, ...Array.from({ length: LIMIT - 6 }, (_, i) => i + 4)],
      );
    });
  });
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`two claims at once of one endpoint's backlog of ${BACKLOG} deliveries [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      await seedSubscriptions(db, { whk_busy: null });
      await seedDeliveries(db, BACKLOG, () => ({ sub: 'whk_busy' }));
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    // Two dispatchers woken by one commit claim at once: the second locks past the rows the first
    // holds, among twice the rows a claim takes, rather than finding them all taken.
    test(`the second takes the next ${LIMIT} rows, none the first holds`, async () => {
      const claim = (db: Parameters<typeof claimDue>[0], token: string) => claimDue(db, { token, leaseMs: 60_000, limit: LIMIT });
      // The first claim's rows stay locked until its transaction ends; the second reads the same
      // rows as due meanwhile.
      const [first, second] = await write(tdb.db.kysely, async (tx) => {
        const a = await claim(tx, 'a');
        return [a, await claim(tdb.db.kysely, 'b')];
      });
      assert.deepEqual(
        [...first, ...second].map((r) => Number(r.event_seq)),
        Array.from({ length: 2 * LIMIT }, (_, i) => i + 1),
      );
    });
  });
}
