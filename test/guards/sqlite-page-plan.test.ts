// A page of a set with parts on SQLite reads its rows through the table's key, whatever the
// statistics (docs/pages.md §Parts). SQLite keeps no statistics until ANALYZE runs, and a server
// never runs it: without them the planner once walked the workspace's whole index of messages and
// probed the page's id list for every row (200-750 ms a page at 50,000 messages). Checked on the
// plan of the statement a page runs, on a database that was never analyzed. PostgreSQL's plans
// are checked in test/guards/rank-generic-plan.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { rankPartedPage, rankRebuild } from '../../src/db/rank/index.ts';
import { isoNow, newId } from '../../src/lib/ids.ts';
import { MESSAGES, messageReader } from '../../src/messages/repository.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { sqlitePlan } from '../helpers/plans.ts';
import { statementsOf } from '../helpers/sql-spy.ts';
import { write } from '../../src/db/write.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('a message page on SQLite without statistics [sqlite]', () => {
  let tdb: TestDb;
  before(async () => {
    tdb = await createTestDb('sqlite');
    const db = tdb.db.kysely;
    const at = isoNow(T0);
    await sql`insert into workspaces (id, name, created_at) values ('ws_p', 'p', ${at})`.execute(db);
    await sql`insert into users (id, workspace_id, external_id, email, role, created_at, updated_at) values ('usr_p', 'ws_p', null, 'p@x.test', 'member', ${at}, ${at})`.execute(
      db,
    );
    for (const [i, v] of ['public', 'restricted', 'private'].entries())
      await sql`insert into channels (id, workspace_id, external_id, provider, name, visibility, message_count, created_at, updated_at)
        values (${`chn_${i}`}, 'ws_p', null, 'slack', ${`c${i}`}, ${v}, 0, ${at}, ${at})`.execute(db);
    await sql`insert into channel_members (channel_id, user_id, created_at) values ('chn_2', 'usr_p', ${at})`.execute(db);
    const rows = Array.from({ length: 300 }, (_, k) => {
      const c = k % 3;
      return sql`(${newId('msg', T0 + k)}, 'ws_p', ${`chn_${c}`}, ${['public', 'restricted', 'private'][c]}, null, ${isoNow(T0 + k * 1000)}, null, 'slack', null, 'TEXT', ${at}, ${at})`;
    });
    await sql`insert into messages (id, workspace_id, channel_id, channel_visibility, external_id, sent_at, edited_at, provider, provider_thread_id, text_type, created_at, updated_at)
      values ${sql.join(rows)}`.execute(db);
    await write(db, (tx) => rankRebuild(tx, MESSAGES, ['ws_p']));
  });
  after(() => tdb.drop());

  for (const [who, userId] of [
    ['a workspace key', null],
    ['a member of a private channel', 'usr_p'],
  ] as const) {
    test(`${who}: the page's rows are looked up by id, one per id`, async () => {
      const db = tdb.db.kysely;
      const stats = await sql<{ n: number }>`select count(*) as n from sqlite_master where name = 'sqlite_stat1'`.execute(db);
      assert.equal(stats.rows[0]?.n, 0, 'the database was never analyzed');
      const { result, statements } = await statementsOf(() =>
        rankPartedPage(db, MESSAGES, ['ws_p'], { offset: 40, limit: 25 }, messageReader({ workspaceId: 'ws_p', userId })),
      );
      assert.equal(result.rows.length, 25);
      const rowsStatement = statements.find((s) => /json_each\([^)]*\) j (cross )?join "messages" t/.test(s));
      assert.ok(rowsStatement, 'the page reads its rows by their ids');
      const steps = await sqlitePlan(db, rowsStatement);
      const ids = steps.findIndex((d) => /^SCAN j\b/.test(d));
      const table = steps.findIndex((d) => /^SEARCH t\b/.test(d));
      assert.ok(ids >= 0 && table > ids, `the id list drives the lookups: ${JSON.stringify(steps)}`);
      assert.match(steps[table] as string, /\(id=\?\)/, `each row through the key: ${JSON.stringify(steps)}`);
    });
  }
});
