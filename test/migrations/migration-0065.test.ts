// Migration 0065_change_log_pages on a database that holds history and events, on both databases
// (docs/events.md §Storage): every row is kept as it was, the history of a field still reads the
// same, `events_occurred` is gone, and on SQLite `field_history` keeps its rows in its key (no rowid).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { fieldHistory, RECORD_TYPES } from '../../src/records/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = (d: number) => `2026-01-${String(d).padStart(2, '0')}T00:00:00.000Z`;

for (const dialect of testDialects()) {
  describe(`migration 0065_change_log_pages [${dialect}]`, () => {
    let tdb: TestDb;
    const history = () => sql`select * from field_history order by record_id, field, seq`.execute(tdb.db.kysely).then((r) => r.rows);
    const events = () => sql`select * from events order by seq`.execute(tdb.db.kysely).then((r) => r.rows);
    let historyBefore: unknown[];
    let eventsBefore: unknown[];
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0065' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_a', 'A', ${AT(1)})`.execute(db);
      await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
        values ('acc_1', 'ws_a', 'account', null, ${JSON.stringify({ $name: 'Third' })}, ${AT(1)}, ${AT(3)})`.execute(db);
      await sql`insert into field_history (record_id, field, seq, workspace_id, value, recorded_at, is_create) values
        ('acc_1', '*', 0, 'ws_a', ${JSON.stringify({ $name: 'First' })}, ${AT(1)}, 1),
        ('acc_1', '$name', 1, 'ws_a', '"Second"', ${AT(2)}, 0),
        ('acc_1', '$name', 2, 'ws_a', '"Third"', ${AT(3)}, 0)`.execute(db);
      for (const d of [1, 2, 3])
        await sql`insert into events (id, workspace_id, type, object_id, occurred_at, body)
          values (${`evt_${d}`}, 'ws_a', ${d === 1 ? 'account.created' : 'account.updated'}, 'acc_1', ${AT(d)}, '{}')`.execute(db);
      historyBefore = await history();
      eventsBefore = await events();
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test('every history row and event is kept, and a field reads the same history', async () => {
      assert.equal(historyBefore.length, 3);
      assert.deepEqual(await history(), historyBefore);
      assert.deepEqual(await events(), eventsBefore);
      const ctx = operatorCtx(tdb.db.kysely, 'ws_a');
      const page = await fieldHistory(ctx, { type: RECORD_TYPES.account, id: 'acc_1', fieldKey: '$name', limit: 20 });
      assert.deepEqual(
        page.data.map((h) => [h.value, h.isCreate]),
        [
          ['Third', false],
          ['Second', false],
          ['First', true],
        ],
      );
    });

    test('events_occurred is gone; on SQLite field_history has no rowid', async () => {
      const db = tdb.db.kysely;
      const indexes =
        dialect === 'postgres'
          ? await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'events' and schemaname = current_schema()`.execute(db)
          : await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'events'`.execute(db);
      assert.ok(!indexes.rows.some((r) => r.name === 'events_occurred'), JSON.stringify(indexes.rows));
      assert.ok(indexes.rows.some((r) => r.name === 'events_workspace_seq'));
      if (dialect === 'sqlite') await assert.rejects(sql`select rowid from field_history`.execute(db), /no such column: rowid/);
    });
  });
}
