// Migration 0062_record_facets: the ranked sets of listed values (docs/filtering.md §Ranked values).
// From a database at 0061 holding tasks of every status, and a contact: each status's set holds
// exactly its tasks, newest first, counted exactly at every offset; nothing else is ranked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { TASK_STATUSES } from '../../src/definitions/catalogue.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { FACETS } from '../../src/records/index/facets.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { checkEntries, checkPages, naivePage, useRankSizes } from '../helpers/rank.ts';

const T0 = Date.UTC(2026, 0, 1);

for (const dialect of testDialects()) {
  describe(`migration 0062_record_facets [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0062' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_f', 'f', ${isoNow(T0)})`.execute(db);
      for (let k = 0; k < 90; k++) {
        const id = `tsk_${String(k).padStart(4, '0')}`;
        const status = TASK_STATUSES[k % 3]!;
        const at = isoNow(T0 + k * 1000);
        await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
          values (${id}, 'ws_f', 'task', null, ${JSON.stringify({ $title: `t${k}`, $status: status })}, ${at}, ${at})`.execute(db);
        await sql`insert into record_values (workspace_id, object_type, field, value_text, value_num, record_id)
          values ('ws_f', 'task', '$status', ${status.toLowerCase()}, null, ${id}), ('ws_f', 'task', '$title', ${`t${k}`}, null, ${id})`.execute(db);
      }
      await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
        values ('con_1', 'ws_f', 'contact', null, '{}', ${isoNow(T0)}, ${isoNow(T0)})`.execute(db);
      await migrate(tdb.db);
    });
    after(() => tdb.drop());

    test("each status's set holds its tasks, newest first, at every offset", async () => {
      const db = tdb.db.kysely;
      for (const [i, status] of TASK_STATUSES.entries()) {
        const values = ['ws_f', 'task', '$status', status.toLowerCase()];
        assert.equal((await checkEntries(db, FACETS, values)).total, i < 3 ? 30 : 0, status);
        await checkPages(db, FACETS, values, { limit: 4 });
        if (i < 3)
          assert.deepEqual(
            await naivePage(db, FACETS, values, 0, 3),
            [87, 84, 81].map((k) => `tsk_${String(k + i).padStart(4, '0')}`),
          );
      }
      const rows = await sql<{ c: number }>`select count(*) as c from record_facets`.execute(db);
      assert.equal(Number(rows.rows[0]?.c), 90, 'one row per task, none for titles or contacts');
    });
  });
}
