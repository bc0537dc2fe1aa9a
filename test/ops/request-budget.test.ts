// One deadline for all of a request's waits on PostgreSQL (docs/reliability.md §Lost connections): a
// write that waits for a place among the transactions and then for a statement answers 503 when
// the request's one deadline has passed, not after each wait's own. The 503 loses nothing and
// leaves nothing behind: the write is rolled back, and the connection goes back to the pool clean.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../src/db/types.ts';
import { call, seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { type FaultApp, faultApp } from '../helpers/faults.ts';
import { write } from '../../src/db/write.ts';

// The database cancels a statement after 3 s; every wait of the process ends a second later (4 s).
const TIMEOUT_MS = 3000;
const DEADLINE_MS = TIMEOUT_MS + 1000;
// How long every place among the transactions stays taken: the write then waits this long for one,
// and its statement waits on a row lock until the database cancels it. Each wait alone is within
// its own deadline; the two together (5.5 s) are not within the request's.
const SLOTS_HELD_MS = 2500;

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
before(() => process.on('unhandledRejection', onUnhandled));
after(() => process.off('unhandledRejection', onUnhandled));

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`one deadline per request [${dialect}]`, () => {
    let f: FaultApp;
    before(async () => {
      f = await faultApp({ env: { DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) } });
    });
    after(() => f.close());

    test('a write that waits for a place and then for its statement answers 503 at the request deadline, and is rolled back', async () => {
      const s = await seedWorkspace(f.t);
      const made = await call(f.t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ada', lastName: 'Before' } } });
      assert.equal(made.statusCode, 200, made.body);
      const id = made.json().id as string;

      // Every place among the process's transactions is taken; one holder also locks the contact's row.
      const slots = f.db.pool!.transactionSlots;
      let releaseSlots!: () => void;
      let releaseRow!: () => void;
      const slotsFreed = new Promise<void>((r) => (releaseSlots = r));
      const rowFreed = new Promise<void>((r) => (releaseRow = r));
      const hold = (fn: (tx: Transaction<Database>) => Promise<unknown>, until: Promise<void>) =>
        write(f.db.kysely, async (tx) => {
          await fn(tx);
          await until;
        });
      const holders = [hold((tx) => sql`select id from records where id = ${id} for update`.execute(tx), rowFreed)];
      for (let i = 1; i < slots; i++) holders.push(hold((tx) => sql`select 1`.execute(tx), slotsFreed));
      while (f.db.pool!.transactions() < slots) await new Promise((r) => setTimeout(r, 20));

      try {
        const from = f.t.logs().length;
        const started = performance.now();
        const update = fetch(`${f.base}/v1/contacts/${id}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json' },
          body: JSON.stringify({ fields: { $name: { firstName: 'Ada', lastName: 'After' } } }),
          signal: AbortSignal.timeout(15_000),
        });
        setTimeout(releaseSlots, SLOTS_HELD_MS);
        const res = await update;
        const elapsed = performance.now() - started;
        const body = await res.text();
        assert.equal(res.status, 503, body);
        assert.equal(res.headers.get('retry-after'), '1');
        assert.equal(JSON.parse(body).error.code, 'service_unavailable');
        // A missed deadline says the database did not answer in time, once and without a stack; it
        // is no outage, which the database's own probe would declare over at once
        // (docs/reliability.md §Operational faults in the log).
        const said = f.t
          .logs()
          .slice(from)
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { msg: string; code?: string })
          .filter((l) => l.msg !== 'request');
        assert.deepEqual(
          said.map((l) => [l.msg, l.code]),
          [['the database did not answer in time; requests that waited for it past their time budget are answered 503', 'DATABASE_DEADLINE']],
        );
        assert.ok(!f.t.logs().slice(from).includes('"stack"'), 'a line carries a stack');
        // Each wait within its own deadline would have answered after both: SLOTS_HELD_MS + TIMEOUT_MS.
        assert.ok(elapsed < SLOTS_HELD_MS + TIMEOUT_MS - 500, `answered after ${Math.round(elapsed)} ms, the deadline being ${DEADLINE_MS} ms`);

        // The row stays locked until the database has cancelled the write's statement: the write never applies.
        await new Promise((r) => setTimeout(r, SLOTS_HELD_MS + TIMEOUT_MS + 500 - (performance.now() - started)));
      } finally {
        releaseSlots();
        releaseRow();
        await Promise.allSettled(holders);
      }
      const now = await call(f.t, s.secret, 'GET', `/v1/contacts/${id}`);
      assert.equal(now.statusCode, 200, now.body);
      assert.equal(now.json().fields.$name.value.lastName, 'Before');
      // Every place is free again and every connection is clean: writes succeed at once.
      while (f.db.pool!.transactions() > 0) await new Promise((r) => setTimeout(r, 20));
      const again = await Promise.all(
        Array.from({ length: slots }, (_, i) =>
          call(f.t, s.secret, 'POST', `/v1/contacts/${id}`, { fields: { $name: { firstName: 'Ada', lastName: `After ${i}` } } }),
        ),
      );
      for (const r of again) assert.equal(r.statusCode, 200, r.body);
      assert.deepEqual(unhandled, []);
    });
  });
}
