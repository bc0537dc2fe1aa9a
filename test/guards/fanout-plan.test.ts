// A chunk of an import queues its events for the webhooks by their ids (`insertEvents`, whose
// fan-out looks each event up): on SQLite each event is found through its id's index, however
// much the events table grew after the statistics were taken (docs/design.md §Database
// statistics). A server or an import starts by refreshing them; where that found the table with a
// few rows and kept the count, the connection's planner scanned the whole table for every chunk of
// 100 events or more, so that each chunk of a long import held the write lock longer than the one
// before. The plan is asked of the writer's connection, the one that runs the statement.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type EventRow, insertEvents } from '../../src/changes/repository.ts';
import { refreshStatistics } from '../../src/db/statistics.ts';
import { write } from '../../src/db/write.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { sqlitePlan } from '../helpers/plans.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

const AT = '2026-01-01T00:00:00.000Z';
const event = (n: number): EventRow => ({
  id: `evt_${String(n).padStart(7, '0')}`,
  workspace_id: 'ws_f',
  type: 'contact.created',
  object_id: `con_${n}`,
  occurred_at: AT,
  body: '{}',
});
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => event(from + i));

describe('the fan-out of a chunk of events, after statistics taken on a few events [sqlite]', () => {
  let tdb: TestDb;
  before(async () => {
    tdb = await createTestDb('sqlite');
    const db = tdb.db.kysely;
    await sql`insert into workspaces (id, name, created_at) values ('ws_f', 'f', ${AT})`.execute(db);
    // The events of a young database, when the statistics are refreshed (a server's start).
    await write(db, (tx) => insertEvents(tx, range(0, 119)));
    await refreshStatistics(tdb.db);
    // Then an import writes many more.
    for (let from = 1000; from < 10_000; from += 1000) await write(db, (tx) => insertEvents(tx, range(from, 1000)));
  });
  after(() => tdb.drop());

  test('each of 1,000 events is looked up by its id', async () => {
    const db = tdb.db.kysely;
    const { statements } = await statementsOf(() => write(db, (tx) => insertEvents(tx, range(10_000, 1000))));
    const fanOut = statements.find((s) => /^insert into webhook_deliveries/i.test(s.trim()));
    assert.ok(fanOut, 'the events are queued for the subscriptions');
    const steps = await write(db, (tx) => sqlitePlan(tx, fanOut));
    assert.ok(!steps.some((d) => /^SCAN e\b/.test(d)), `no scan of the events: ${JSON.stringify(steps)}`);
    assert.ok(
      steps.some((d) => /^SEARCH e USING (COVERING )?INDEX \S+ \(id=\?\)/.test(d)),
      `each event through its id: ${JSON.stringify(steps)}`,
    );
  });
});
